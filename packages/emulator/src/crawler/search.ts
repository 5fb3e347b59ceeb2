/**
 * BM25F over the pages of crawls (docs/decisions.md D30): a term counts three times in the
 * title, twice in a heading and once in the body, so the page a query names (by its title or a
 * heading) outranks pages that mention the words in passing; passages for snippets and the
 * prompt answer. Each crawl
 * keeps its own index; a search over several scores every page with the statistics of all of
 * them together (document count, document frequencies, average length), so that scores are
 * those of one index over the union and compare across crawls.
 */

const WORD = /[\p{L}\p{N}]+/gu;
// A light stemmer: plural and third-person s, so "costs" finds "cost" and "subscriptions" "subscription".
const stem = (t: string) => (t.length > 3 && t.endsWith('s') && !t.endsWith('ss') ? t.slice(0, -1) : t);
const tokens = (text: string) => (text.toLowerCase().match(WORD) ?? []).filter((t) => t.length > 1).map(stem);

interface Doc {
  url: string;
  title: string;
  /** Its text, read again for proximity and passages (from the crawl's file, not kept here). */
  text: () => string;
  /** Its weighted length: each field's words times the field's weight. */
  length: number;
  /** Weighted term frequencies. */
  terms: Map<string, number>;
}

/** How much a word weighs in each field. */
export const FIELD_WEIGHTS = { title: 3, headings: 2, body: 1 } as const;

/** One search hit. */
export interface Hit {
  url: string;
  title: string;
  score: number;
  snippet: string;
}

/** The statistics BM25 scores with: those of one index, or of several summed. */
export interface Corpus {
  docs: number;
  totalLength: number;
  df(term: string): number;
}

export class SearchIndex implements Corpus {
  private readonly byUrl = new Map<string, Doc>();
  private readonly frequencies = new Map<string, number>();
  totalLength = 0;

  /** How many pages the index holds. */
  get docs(): number {
    return this.byUrl.size;
  }

  df(term: string): number {
    return this.frequencies.get(term) ?? 0;
  }

  /**
   * Add or replace a page (its headings among its text's lines). `read` gives its text again
   * when a search needs it (by default the index keeps `text`).
   */
  put(url: string, title: string, text: string, headings: readonly string[] = [], read = () => text): void {
    this.remove(url);
    const terms = new Map<string, number>();
    let length = 0;
    const field = (words: string[], weight: number) => {
      for (const t of words) terms.set(t, (terms.get(t) ?? 0) + weight);
      length += words.length * weight;
    };
    field(tokens(title), FIELD_WEIGHTS.title);
    // A heading is also a line of the body: it weighs its own weight in all.
    field(tokens(headings.join(' ')), FIELD_WEIGHTS.headings - FIELD_WEIGHTS.body);
    field(tokens(text), FIELD_WEIGHTS.body);
    for (const t of terms.keys()) this.frequencies.set(t, this.df(t) + 1);
    this.byUrl.set(url, { url, title, text: read, length, terms });
    this.totalLength += length;
  }

  remove(url: string): void {
    const doc = this.byUrl.get(url);
    if (!doc) return;
    for (const t of doc.terms.keys()) this.frequencies.set(t, this.df(t) - 1);
    this.totalLength -= doc.length;
    this.byUrl.delete(url);
  }

  /** BM25 (k1 1.2, b 0.75) with the statistics of `corpus` (this index alone by default), best first. */
  search(query: string, limit = 10, corpus: Corpus = this): Hit[] {
    const q = [...new Set(tokens(query))];
    const n = corpus.docs;
    if (n === 0 || q.length === 0) return [];
    const avg = corpus.totalLength / n || 1;
    const idf = new Map(q.map((t) => [t, Math.log(1 + (n - corpus.df(t) + 0.5) / (corpus.df(t) + 0.5))]));
    const scored: { doc: Doc; score: number }[] = [];
    for (const doc of this.byUrl.values()) {
      let score = 0;
      for (const t of q) {
        const f = doc.terms.get(t);
        if (!f) continue;
        score += ((idf.get(t) ?? 0) * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * doc.length) / avg));
      }
      if (score > 0) scored.push({ doc, score });
    }
    scored.sort((a, b) => b.score - a.score);
    // The best candidates again, by how close together the query's words stand in them.
    for (const hit of scored.slice(0, PROXIMITY_CANDIDATES))
      hit.score *= 1 + PROXIMITY_WEIGHT * proximity(hit.doc.text(), q, idf);
    return scored
      .sort((a, b) => b.score - a.score || a.doc.url.localeCompare(b.doc.url))
      .slice(0, limit)
      .map(({ doc, score }) => ({
        url: doc.url,
        title: doc.title,
        score: Number(score.toFixed(4)),
        snippet: passage(doc.text(), idf),
      }));
  }
}

/** How many of the best BM25F candidates are scored again by proximity, and how much it can add. */
const PROXIMITY_CANDIDATES = 50;
const PROXIMITY_WEIGHT = 2;

/**
 * How close together the query's words stand in `text`, from 0 to 1: over the shortest run of
 * words that holds the most query weight, that weight's share of the query's times how densely
 * the run holds it (a phrase that is the query scores 1).
 */
export function proximity(text: string, query: readonly string[], idf: ReadonlyMap<string, number>): number {
  if (query.length < 2) return 0;
  const words = tokens(text);
  const total = query.reduce((sum, t) => sum + (idf.get(t) ?? 0), 0) || 1;
  const wanted = new Set(query);
  const counts = new Map<string, number>();
  let weight = 0;
  let best = 0;
  let from = 0;
  for (let to = 0; to < words.length; to++) {
    const t = words[to] as string;
    if (!wanted.has(t)) continue;
    counts.set(t, (counts.get(t) ?? 0) + 1);
    if (counts.get(t) === 1) weight += idf.get(t) ?? 0;
    // Shrink from the left while the run keeps its weight.
    while (from < to) {
      const first = words[from] as string;
      if (!wanted.has(first)) from++;
      else if ((counts.get(first) ?? 0) > 1) {
        counts.set(first, (counts.get(first) ?? 0) - 1);
        from++;
      } else break;
    }
    const distinct = [...counts.values()].filter((n) => n > 0).length;
    const score = (weight / total) * (distinct / (to - from + 1));
    if (score > best) best = score;
    // Keep runs short: past a dozen words the window starts again here.
    if (to - from > 12) {
      counts.clear();
      weight = idf.get(t) ?? 0;
      counts.set(t, 1);
      from = to;
    }
  }
  return best;
}

/** The statistics of several indexes together: what one index over all their pages would have. */
export function corpusOf(indexes: readonly SearchIndex[]): Corpus {
  return {
    docs: indexes.reduce((n, i) => n + i.docs, 0),
    totalLength: indexes.reduce((n, i) => n + i.totalLength, 0),
    df: (term) => indexes.reduce((n, i) => n + i.df(term), 0),
  };
}

const PASSAGE_CHARS = 300;

/**
 * The best passage of `text` for a query: the run of consecutive sentences, at most about 300
 * characters (`maxChars`; 0 for one sentence), that holds the most query weight: each term by
 * its idf, repeats counted with diminishing returns (1 + ln n); the earliest on a tie.
 */
export function passage(text: string, weights: ReadonlyMap<string, number>, maxChars = PASSAGE_CHARS): string {
  const sentences = text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  const terms = sentences.map((s) => tokens(s).filter((t) => weights.has(t)));
  let top = { from: 0, to: 0, score: -1 };
  for (let from = 0; from < sentences.length; from++) {
    // A passage starts and ends on a sentence that holds a query term (the first sentence when none does).
    if (!terms[from]?.length) continue;
    const counts = new Map<string, number>();
    let length = 0;
    for (let to = from; to < sentences.length; to++) {
      length += (sentences[to]?.length ?? 0) + (to > from ? 1 : 0);
      if (to > from && length > maxChars) break;
      for (const t of terms[to] ?? []) counts.set(t, (counts.get(t) ?? 0) + 1);
      let score = 0;
      for (const [t, n] of counts) score += (weights.get(t) ?? 0) * (1 + Math.log(n));
      if (score > top.score && terms[to]?.length) top = { from, to, score };
    }
  }
  const chosen = sentences.slice(top.from, top.to + 1).join(' ');
  return chosen.length > PASSAGE_CHARS ? `${chosen.slice(0, PASSAGE_CHARS - 3)}...` : chosen;
}

/** The sentence of `text` that holds the most query terms (longer terms weigh more). */
export function best(text: string, query: readonly string[]): string {
  return passage(text, new Map(query.map((t) => [t, t.length])), 0);
}

export { tokens };
