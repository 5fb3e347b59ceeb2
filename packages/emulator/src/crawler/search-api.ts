/**
 * Search and prompt over the crawls' indexes (docs/decisions.md D10, docs/decisions.md D12): `crawl_ids` in, skipped crawls named
 * with their reason, and the prompt answer as Server-Sent Events.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorBody, isRefusal, type Refusal, refusal } from '../http.js';
import type { EmulatedCrawl } from './crawl.js';
import { best, corpusOf, type Hit, tokens } from './search.js';

const MAX_CRAWLS = 10;
const MODES = ['fts', 'vector', 'hybrid'];
// Filters the service takes (its SDKs list them); the emulator honours the first four.
const FILTERS = ['url_prefix', 'host', 'crawler_uuid', 'http_status', 'source_format', 'content_type'];

interface Skipped {
  crawler_uuid: string;
  reason: string;
  status: string | null;
}

interface Picked {
  ok: EmulatedCrawl[];
  skipped: Skipped[];
}

interface ScoredHit extends Hit {
  crawl: EmulatedCrawl;
}

/** The crawls a search or prompt names (`crawl_ids`, or the older `crawls`), or a refusal. */
function pick(
  body: Record<string, unknown>,
  key: string,
  crawls: ReadonlyMap<string, EmulatedCrawl>,
): Picked | Refusal {
  const ids = body.crawl_ids ?? body.crawls;
  if (!Array.isArray(ids) || ids.length === 0 || ids.some((c) => typeof c !== 'string' || c === '')) {
    return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', '`crawl_ids` must list one or more crawl ids');
  }
  if (new Set(ids).size !== ids.length) {
    return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', '`crawl_ids` must not name a crawl twice');
  }
  if (ids.length > MAX_CRAWLS) {
    return refusal(
      400,
      'ERR::CRAWLER::SEARCH_TOO_MANY_CRAWLS',
      `at most ${MAX_CRAWLS} crawls per search (got ${ids.length}): split the search`,
    );
  }
  const ok: EmulatedCrawl[] = [];
  const skipped: Skipped[] = [];
  for (const id of ids as string[]) {
    const c = crawls.get(id);
    const status = (c?.searchBlock()?.status as string | undefined) ?? null;
    if (!c || c.key !== key) skipped.push({ crawler_uuid: id, reason: 'not_found', status: null });
    else if (!c.config.search) skipped.push({ crawler_uuid: id, reason: 'search_not_enabled', status: 'DISABLED' });
    else if (c.searchState === 'FAILED') skipped.push({ crawler_uuid: id, reason: 'search_failed', status });
    else if (c.searchState !== 'READY') skipped.push({ crawler_uuid: id, reason: 'search_not_ready', status });
    else ok.push(c);
  }
  // The spec's search errors: every crawl asked is unsearchable for the one reason.
  if (ok.length === 0 && skipped.every((s) => s.reason === 'search_not_enabled')) {
    return refusal(
      400,
      'ERR::CRAWLER::SEARCH_NOT_ENABLED',
      'none of these crawls builds a search index: start them with `search: true`',
    );
  }
  if (ok.length === 0 && skipped.every((s) => s.reason === 'search_not_ready')) {
    return refusal(
      409,
      'ERR::CRAWLER::SEARCH_NOT_READY',
      'the search index is not READY yet: wait for crawler_search_ready',
      {
        is_retryable: true,
        retry_delay: 2,
      },
    );
  }
  return { ok, skipped };
}

/** Retrieval options shared by search and prompt: limit, mode, filters. */
function retrieval(body: Record<string, unknown>, fallbackLimit: number) {
  const limit = body.limit ?? fallbackLimit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 50) {
    return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', '`limit` must be a whole number from 1 to 50');
  }
  const mode = body.mode ?? 'hybrid';
  if (typeof mode !== 'string' || !MODES.includes(mode)) {
    return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', `\`mode\` must be ${MODES.join(', ')}`);
  }
  const filters = (body.filters ?? {}) as Record<string, unknown>;
  if (typeof filters !== 'object' || filters === null || Array.isArray(filters)) {
    return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', '`filters` must be an object');
  }
  const unknown = Object.keys(filters).find((k) => !FILTERS.includes(k));
  if (unknown !== undefined) {
    return refusal(
      400,
      'ERR::CRAWLER::INVALID_REQUEST',
      `unknown filter ${JSON.stringify(unknown)}: use ${FILTERS.join(', ')}`,
    );
  }
  return { limit, mode, filters };
}

function keep(hit: ScoredHit, filters: Record<string, unknown>): boolean {
  const f = filters;
  if (typeof f.url_prefix === 'string' && !hit.url.startsWith(f.url_prefix)) return false;
  if (typeof f.host === 'string' && new URL(hit.url).host !== f.host) return false;
  if (typeof f.crawler_uuid === 'string' && hit.crawl.uuid !== f.crawler_uuid) return false;
  if (typeof f.http_status === 'number' && hit.crawl.pages.get(hit.url)?.http_status !== f.http_status) return false;
  return true;
}

function hits(picked: Picked, query: string, upTo: number, filters: Record<string, unknown>): ScoredHit[] {
  // One corpus for all the crawls searched: their scores compare.
  const corpus = corpusOf(picked.ok.map((crawl) => crawl.index));
  return picked.ok
    .flatMap((crawl) => crawl.index.search(query, upTo, corpus).map((h) => ({ ...h, crawl })))
    .filter((h) => keep(h, filters))
    .sort((a, b) => b.score - a.score);
}

const encodeCursor = (offset: number) => Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
function decodeCursor(cursor: unknown): number | undefined {
  if (cursor === undefined || cursor === null) return 0;
  try {
    const { o } = JSON.parse(Buffer.from(String(cursor), 'base64url').toString('utf8')) as { o?: unknown };
    return typeof o === 'number' && Number.isInteger(o) && o >= 0 ? o : undefined;
  } catch {
    return undefined;
  }
}

/** `POST /crawl/search` (docs/decisions.md D10). */
export function search(
  body: Record<string, unknown>,
  key: string,
  crawls: ReadonlyMap<string, EmulatedCrawl>,
  apiUrl: string,
): Refusal | Record<string, unknown> {
  const picked = pick(body, key, crawls);
  if (isRefusal(picked)) return picked;
  if (typeof body.query !== 'string' || !body.query.trim())
    return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', '`query` must be a non-empty string');
  const options = retrieval(body, 10);
  if (isRefusal(options)) return options;
  const offset = decodeCursor(body.cursor);
  if (offset === undefined)
    return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', '`cursor` is not one this service gave');
  const all = hits(picked, body.query, offset + options.limit + 1, options.filters);
  const page = all.slice(offset, offset + options.limit);
  return {
    query: body.query,
    mode: options.mode,
    limit: options.limit,
    results: page.map((h, i) => ({
      rank: offset + i + 1,
      score: h.score,
      crawler_uuid: h.crawl.uuid,
      url: h.url,
      title: h.title || null,
      text: h.snippet,
      contents_url: `${apiUrl}/crawl/${h.crawl.uuid}/contents?url=${encodeURIComponent(h.url)}`,
    })),
    skipped: picked.skipped,
    cursor: all.length > offset + options.limit ? encodeCursor(offset + options.limit) : null,
  };
}

/** What the prompt answer needs beyond the request. */
export interface PromptContext {
  key: string;
  crawls: ReadonlyMap<string, EmulatedCrawl>;
  /** Send an `event: error` frame after this many tokens (a fault for tests). */
  failAfter: number | undefined;
}

/**
 * `POST /crawl/prompt` (docs/decisions.md D12): an extractive answer, the best sentence of each of the best
 * passages, as `source` frames, `token` frames whose data is a JSON string, and one `done`.
 * A comment keeps the connection alive while the answer is prepared.
 */
export async function prompt(
  req: IncomingMessage,
  res: ServerResponse,
  body: Record<string, unknown>,
  context: PromptContext,
): Promise<Refusal | undefined> {
  const picked = pick(body, context.key, context.crawls);
  if (isRefusal(picked)) return picked;
  if (typeof body.prompt !== 'string' || !body.prompt.trim())
    return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', '`prompt` must be a non-empty string');
  const generation = body.generation;
  if (generation !== undefined && (typeof generation !== 'object' || generation === null))
    return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', '`generation` must be an object such as { stream: true }');
  const options = retrieval((body.search ?? {}) as Record<string, unknown>, 3);
  if (isRefusal(options)) return options;
  let closed = false;
  req.socket.on('close', () => {
    closed = true;
  });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  res.write(': keep-alive\n\n');
  await new Promise((r) => setImmediate(r));
  const sources = hits(picked, body.prompt, options.limit, options.filters).slice(0, options.limit);
  const q = tokens(body.prompt);
  sources.forEach((h, i) => {
    const frame = { id: i + 1, crawler_uuid: h.crawl.uuid, url: h.url, title: h.title || null, score: h.score };
    res.write(`event: source\ndata: ${JSON.stringify(frame)}\n\n`);
  });
  const answer = sources.length
    ? sources.map((h, i) => `${best(h.snippet, q)} [${i + 1}]`).join(' ')
    : 'The crawled pages do not answer this.';
  const words = answer.match(/\S+\s*/g) ?? [];
  for (let i = 0; i < words.length && !closed; i++) {
    if (context.failAfter !== undefined && i === context.failAfter) {
      const error = errorBody(500, 'ERR::CRAWLER::PROMPT_FAILED', 'the answer could not be completed', {
        is_retryable: true,
      });
      res.end(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
      return undefined;
    }
    res.write(`event: token\ndata: ${JSON.stringify(words[i])}\n\n`);
    await new Promise((r) => setTimeout(r, 2));
  }
  const done = { sources_used: sources.map((_, i) => i + 1), sources_dropped: 0, truncated: false };
  res.end(`event: done\ndata: ${JSON.stringify(done)}\n\n`);
  return undefined;
}
