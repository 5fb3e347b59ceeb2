/**
 * BM25F over the pages of crawls (docs/decisions.md D30): a term counts three times in the
 * title, twice in a heading and once in the body, each field tempered by its own length, and a
 * page the query names by its title gains beyond the counts, so the page a query names outranks
 * pages that mention the words in passing; passages for snippets and the prompt answer. Each crawl
 * keeps its own index; a search over several scores every page with the statistics of all of
 * them together (document count, document frequencies, average length), so that scores are
 * those of one index over the union and compare across crawls.
 */

/** A word, or words joined by hyphens or underscores (`pg_dump`, `B-Tree`). */
const WORD = /[\p{L}\p{N}]+(?:[-_][\p{L}\p{N}]+)*/gu;
/**
 * A light stemmer: plural and third-person s (es after x and ss), so "costs" finds "cost",
 * "subscriptions" "subscription", "indexes" "index" and "classes" "class" ("databases" stays
 * "database": es after other letters is too often a word's own e).
 */
const stem = (t: string) => {
  if (t.length <= 3 || !t.endsWith('s') || t.endsWith('ss')) return t;
  return /(?:x|ss)es$/.test(t) ? t.slice(0, -2) : t.slice(0, -1);
};
/**
 * The words of a text, lower-cased and stemmed; a joined word gives its parts and its parts run
 * together, so "pg_dump" and "B-Tree" are found by "pg_dump", "dump", "btree" and "tree".
 */
const tokens = (text: string) => {
  const out: string[] = [];
  for (const word of text.toLowerCase().match(WORD) ?? []) {
    const parts = word.split(/[-_]/);
    for (const part of parts) if (part.length > 1) out.push(stem(part));
    if (parts.length > 1) out.push(stem(parts.join('')));
  }
  return out;
};
/** A title without its section number ("9.4. ", "Chapter 31. ", "F.32. "): what names the page. */
const NUMBERING = /^\s*(?:(?:chapter|part|appendix|section)\s+[\dA-Z]+\.?\s+|(?:\d+|[A-Z])(?:\.\d+)*\.\s+)/i;

/** A page's fields, as the index scores them. */
type Field = 'title' | 'headings' | 'body';
const FIELDS: readonly Field[] = ['title', 'headings', 'body'];
/** A value for each field. */
const perField = <T>(value: (field: Field) => T): Record<Field, T> => ({
  title: value('title'),
  headings: value('headings'),
  body: value('body'),
});

interface Doc {
  url: string;
  title: string;
  /** Its text, read again for proximity and passages (from the crawl's file, not kept here). */
  text: () => string;
  /** Words in each field. */
  lengths: Record<Field, number>;
  /** Term frequencies in each field (the body's include the headings' words, as its text does). */
  terms: Record<Field, Map<string, number>>;
}

/** How much a word weighs in each field. */
export const FIELD_WEIGHTS = { title: 3, headings: 2, body: 1 } as const;
/**
 * How much each field's length tempers its frequencies (BM25F's b, per field): a body is
 * normalised fully, a title or a heading list barely, so that a long page named by the query is
 * not outranked by a short one that only mentions it.
 */
const FIELD_B = { title: 0.3, headings: 0.3, body: 0.75 } as const;
const K1 = 1.2;

/**
 * How much a page the query names gains beyond its words' counts (which saturate: a long page
 * that says "table" a thousand times cannot gain from its title saying it too): its score times
 * 1 + this times how fully the query names its title (or, less, its headings).
 */
const TITLE_BOOST = 1;

/**
 * How fully the query names the page, from 0 to 1: the share of the query's weight (by idf) that
 * its title holds, from half to all of it as the query holds more of the title's words (so
 * "CREATE TABLE" is named more fully than "CREATE TABLE AS"); half the share its headings hold,
 * when more.
 */
function named(doc: Doc, query: readonly string[], idf: ReadonlyMap<string, number>): number {
  const total = query.reduce((sum, t) => sum + (idf.get(t) ?? 0), 0) || 1;
  const held = (terms: Map<string, number>) =>
    query.reduce((sum, t) => sum + (terms.has(t) ? (idf.get(t) ?? 0) : 0), 0) / total;
  const titleWords = doc.lengths.title || 1;
  const inTitle = query.reduce((n, t) => n + (doc.terms.title.get(t) ?? 0), 0);
  return Math.max(
    held(doc.terms.title) * (0.5 + 0.5 * Math.min(1, inTitle / titleWords)),
    held(doc.terms.headings) / 2,
  );
}

/** One search hit. */
export interface Hit {
  url: string;
  title: string;
  score: number;
  snippet: string;
}

/** The statistics BM25F scores with: those of one index, or of several summed. */
export interface Corpus {
  docs: number;
  /** Words in each field, over all pages. */
  totalLengths: Record<Field, number>;
  df(term: string): number;
}

const countOf = (words: readonly string[]) => {
  const counts = new Map<string, number>();
  for (const t of words) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
};

/** The terms of a page, each once, whatever fields hold it (what document frequencies count). */
const distinct = (terms: Doc['terms']) => new Set(FIELDS.flatMap((f) => [...terms[f].keys()]));

export class SearchIndex implements Corpus {
  private readonly byUrl = new Map<string, Doc>();
  private readonly frequencies = new Map<string, number>();
  readonly totalLengths: Record<Field, number> = { title: 0, headings: 0, body: 0 };

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
    const words = {
      title: tokens(title.replace(NUMBERING, '')),
      headings: tokens(headings.join(' ')),
      body: tokens(text),
    };
    const terms = perField((f) => countOf(words[f]));
    const lengths = perField((f) => words[f].length);
    for (const t of distinct(terms)) this.frequencies.set(t, this.df(t) + 1);
    for (const f of FIELDS) this.totalLengths[f] += lengths[f];
    this.byUrl.set(url, { url, title, text: read, lengths, terms });
  }

  remove(url: string): void {
    const doc = this.byUrl.get(url);
    if (!doc) return;
    for (const t of distinct(doc.terms)) this.frequencies.set(t, this.df(t) - 1);
    for (const f of FIELDS) this.totalLengths[f] -= doc.lengths[f];
    this.byUrl.delete(url);
  }

  /**
   * BM25F (k1 1.2; each field's frequency tempered by its own length, weighted, summed, then
   * saturated) with the statistics of `corpus` (this index alone by default), best first.
   */
  search(query: string, limit = 10, corpus: Corpus = this): Hit[] {
    const q = [...new Set(tokens(query))];
    const n = corpus.docs;
    if (n === 0 || q.length === 0) return [];
    const avg = perField((f) => corpus.totalLengths[f] / n || 1);
    const idf = new Map(q.map((t) => [t, Math.log(1 + (n - corpus.df(t) + 0.5) / (corpus.df(t) + 0.5))]));
    const scored: { doc: Doc; score: number; text?: string }[] = [];
    for (const doc of this.byUrl.values()) {
      let score = 0;
      const norm = (f: Field) => 1 - FIELD_B[f] + (FIELD_B[f] * doc.lengths[f]) / avg[f];
      for (const t of q) {
        let tf = 0;
        for (const f of FIELDS) {
          const count = doc.terms[f].get(t);
          if (count) tf += (FIELD_WEIGHTS[f] * count) / norm(f);
        }
        if (tf > 0) score += ((idf.get(t) ?? 0) * tf * (K1 + 1)) / (tf + K1);
      }
      if (score > 0) scored.push({ doc, score: score * (1 + TITLE_BOOST * named(doc, q, idf)) });
    }
    scored.sort((a, b) => b.score - a.score);
    // The best candidates again, by how close together the query's words stand in them.
    // (Its text read from the crawl's file once, for this and for its passage.)
    for (const hit of scored.slice(0, PROXIMITY_CANDIDATES)) {
      hit.text = hit.doc.text();
      hit.score *= 1 + PROXIMITY_WEIGHT * proximity(hit.text, q, idf);
    }
    return scored
      .sort((a, b) => b.score - a.score || a.doc.url.localeCompare(b.doc.url))
      .slice(0, limit)
      .map(({ doc, score, text }) => ({
        url: doc.url,
        title: doc.title,
        score: Number(score.toFixed(4)),
        snippet: passage(text ?? doc.text(), idf),
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
    totalLengths: perField((f) => indexes.reduce((n, i) => n + i.totalLengths[f], 0)),
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
