/** A BM25 index over the pages of one crawl, with passages for the prompt answer. */

const WORD = /[\p{L}\p{N}]+/gu;
// A light stemmer: plural and third-person s, so "costs" finds "cost" and "subscriptions" "subscription".
const stem = (t: string) => (t.length > 3 && t.endsWith('s') && !t.endsWith('ss') ? t.slice(0, -1) : t);
const tokens = (text: string) => (text.toLowerCase().match(WORD) ?? []).filter((t) => t.length > 1).map(stem);

interface Doc {
  url: string;
  title: string;
  text: string;
  length: number;
  terms: Map<string, number>;
}

/** One search hit. */
export interface Hit {
  url: string;
  title: string;
  score: number;
  snippet: string;
}

export class SearchIndex {
  private readonly docs = new Map<string, Doc>();
  private readonly df = new Map<string, number>();
  private totalLength = 0;

  get size(): number {
    return this.docs.size;
  }

  /** Add or replace a page; gives whether its text changed. */
  put(url: string, title: string, text: string): boolean {
    const old = this.docs.get(url);
    if (old && old.text === text && old.title === title) return false;
    if (old) this.remove(url);
    const terms = new Map<string, number>();
    const words = tokens(`${title} ${text}`);
    for (const t of words) terms.set(t, (terms.get(t) ?? 0) + 1);
    for (const t of terms.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
    this.docs.set(url, { url, title, text, length: words.length, terms });
    this.totalLength += words.length;
    return true;
  }

  remove(url: string): void {
    const doc = this.docs.get(url);
    if (!doc) return;
    for (const t of doc.terms.keys()) this.df.set(t, (this.df.get(t) ?? 1) - 1);
    this.totalLength -= doc.length;
    this.docs.delete(url);
  }

  /** BM25 (k1 1.2, b 0.75), best first. */
  search(query: string, limit = 10): Hit[] {
    const q = [...new Set(tokens(query))];
    const n = this.docs.size;
    if (n === 0 || q.length === 0) return [];
    const avg = this.totalLength / n || 1;
    const hits: Hit[] = [];
    for (const doc of this.docs.values()) {
      let score = 0;
      for (const t of q) {
        const f = doc.terms.get(t);
        if (!f) continue;
        const df = this.df.get(t) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * doc.length) / avg));
      }
      if (score > 0)
        hits.push({ url: doc.url, title: doc.title, score: Number(score.toFixed(4)), snippet: best(doc.text, q) });
    }
    return hits.sort((a, b) => b.score - a.score || a.url.localeCompare(b.url)).slice(0, limit);
  }
}

/** The sentence of `text` that holds the most query terms. */
export function best(text: string, query: readonly string[]): string {
  const sentences = text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
  let top = sentences[0] ?? '';
  let topScore = -1;
  for (const s of sentences) {
    const words = new Set(tokens(s));
    // Longer terms are rarer and say more: a cheap stand-in for their weight.
    const score = query.filter((t) => words.has(t)).reduce((sum, t) => sum + t.length, 0);
    if (score > topScore) {
      top = s;
      topScore = score;
    }
  }
  return top.length > 300 ? `${top.slice(0, 297)}...` : top;
}

export { tokens };
