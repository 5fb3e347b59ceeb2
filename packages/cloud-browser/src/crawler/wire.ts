/**
 * What the crawler service answers, as its official SDKs read it (docs/decisions.md D9 to docs/decisions.md D12), and the pure
 * functions that read it: a status record with both names of each pair, URL listing lines,
 * search answers, refresh blocks. Pure: no I/O, no `node:` import.
 */
import type { ContentFormat } from './schema.js';

/** Crawl states (docs/decisions.md D11). */
export type CrawlStatusName = 'PENDING' | 'RUNNING' | 'DONE' | 'CANCELLED' | (string & {});

/** Why a crawl stopped (docs/decisions.md D11). */
export type CrawlStopReason =
  | 'no_more_urls'
  | 'page_limit'
  | 'max_duration'
  | 'max_api_credit'
  | 'seed_url_failed'
  | 'user_cancelled'
  | 'crawler_error'
  | 'no_api_credit_left'
  | 'storage_error'
  | (string & {});

/** The counters of a crawl (docs/decisions.md D11); times in Unix seconds, `null` until they happen. */
export interface CrawlState {
  urls_visited: number;
  urls_extracted: number;
  urls_failed: number;
  urls_skipped: number;
  urls_to_crawl: number;
  api_credit_used: number;
  /** Seconds since the crawl started. */
  duration: number;
  start_time: number | null;
  stop_time: number | null;
  stop_reason: CrawlStopReason | null;
  [field: string]: unknown;
}

/** The `search` block of a status record (docs/decisions.md D11). Only `READY` and `PARTIAL` answer queries. */
export interface CrawlSearchState {
  status: 'DISABLED' | 'BUILDING' | 'READY' | 'PARTIAL' | 'FAILED' | (string & {});
  documents: number;
  /** ISO 8601, once built. */
  built_at: string | null;
  generation: number | null;
  [field: string]: unknown;
}

/** The `refresh` block of a status record, and the answer of the refresh calls (docs/decisions.md D11). */
export interface CrawlRefreshState {
  enabled: boolean;
  interval_seconds: number;
  status: 'DISABLED' | 'SCHEDULED' | 'RUNNING' | 'FAILED' | (string & {});
  /** Refresh runs completed so far. */
  generation: number;
  /** ISO 8601. */
  last_run_at: string | null;
  /** ISO 8601; `null` when disabled. */
  next_run_at: string | null;
  consecutive_failures: number;
  [field: string]: unknown;
}

/**
 * The status record of a crawl (docs/decisions.md D11). The spec's names and the service's are both present,
 * whichever the service sent: `uuid` and `crawler_uuid`, `is_complete` and `is_finished`.
 * Unknown fields are kept.
 */
export interface CrawlStatus {
  uuid: string;
  crawler_uuid: string;
  status: CrawlStatusName;
  is_complete: boolean;
  is_finished: boolean;
  /** `null` while running. */
  is_success: boolean | null;
  state: CrawlState;
  /** `null` unless the crawl builds a search index. */
  search: CrawlSearchState | null;
  /** `null` unless the crawl refreshes itself. */
  refresh: CrawlRefreshState | null;
  [field: string]: unknown;
}

/** The statuses a URL listing can be asked for (docs/decisions.md D10). */
export const URL_STATUSES = ['visited', 'pending', 'failed', 'skipped'] as const;
/** One of {@link URL_STATUSES}. */
export type CrawlUrlStatus = (typeof URL_STATUSES)[number];

/** One URL a crawl met; `reason` for failed and skipped URLs. */
export interface CrawlUrl {
  url: string;
  status: CrawlUrlStatus;
  reason?: string;
}

/** One page's contents, by format; `null` where that format could not be produced. */
export interface CrawlContent {
  url: string;
  /** `extracted_data` holds the JSON of the crawl's extraction rules' result, when it has rules. */
  content: Partial<Record<ContentFormat | 'extracted_data', string | null>>;
}

/** Search modes (docs/decisions.md D10). */
export const SEARCH_MODES = ['fts', 'vector', 'hybrid'] as const;
/** One of {@link SEARCH_MODES}. */
export type SearchMode = (typeof SEARCH_MODES)[number];

/** One search hit (docs/decisions.md D10): a passage of a crawled page. */
export interface SearchResult {
  /** 1-based place in the merged ranking. */
  rank: number;
  score: number;
  crawler_uuid: string;
  url: string;
  title: string | null;
  /** The matched passage. */
  text: string;
  /** The `/crawl/{uuid}/contents` address of the whole page, without the key. */
  contents_url: string | null;
  [field: string]: unknown;
}

/** A crawl that contributed nothing to a search, and why: not an error (docs/wire.md §2.3). */
export interface SearchSkipped {
  crawler_uuid: string;
  reason: 'search_not_enabled' | 'search_not_ready' | 'search_failed' | (string & {});
  /** The index status at the time, when the reason has one. */
  status: string | null;
  [field: string]: unknown;
}

/** A search response (docs/decisions.md D10). */
export interface SearchResponse {
  query: string;
  mode: string;
  limit: number;
  results: SearchResult[];
  skipped: SearchSkipped[];
  /** The next page's cursor; `null` on the last page. */
  cursor: string | null;
  [field: string]: unknown;
}

/** A `source` frame of a prompt answer (docs/decisions.md D12): a passage the answer may cite. */
export interface PromptSource {
  id: number;
  crawler_uuid: string;
  url: string;
  title: string | null;
  score: number | null;
  [field: string]: unknown;
}

/** The final `done` frame of a prompt answer (docs/decisions.md D12). */
export interface PromptDone {
  /** The ids of the sources the answer cites. */
  sources_used: number[];
  /** Sources retrieved but left out of the context. */
  sources_dropped: number;
  /** The answer hit its length cap. */
  truncated: boolean;
  [field: string]: unknown;
}

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

/**
 * Read a status record: fill each name of a pair from the other, and derive completion from
 * `status` when the service sent neither flag. `undefined` when it names no crawl.
 *
 * @example
 * readStatus({ crawler_uuid: 'c', status: 'DONE', is_finished: true, is_success: true, state: {} })?.is_complete // true
 */
export function readStatus(body: unknown): CrawlStatus | undefined {
  if (!isRecord(body)) return undefined;
  const id = str(body.crawler_uuid) ?? str(body.uuid);
  if (id === undefined) return undefined;
  const status = str(body.status) ?? 'PENDING';
  const flag = [body.is_finished, body.is_complete].find((v) => typeof v === 'boolean') as boolean | undefined;
  const finished = flag ?? (status === 'DONE' || status === 'CANCELLED');
  const state = isRecord(body.state) ? body.state : {};
  const success = body.is_success;
  return {
    ...body,
    uuid: id,
    crawler_uuid: id,
    status,
    is_complete: finished,
    is_finished: finished,
    is_success: typeof success === 'boolean' ? success : null,
    state: {
      ...state,
      urls_visited: num(state.urls_visited, 0),
      urls_extracted: num(state.urls_extracted, 0),
      urls_failed: num(state.urls_failed, 0),
      urls_skipped: num(state.urls_skipped, 0),
      urls_to_crawl: num(state.urls_to_crawl, 0),
      api_credit_used: num(state.api_credit_used, 0),
      duration: num(state.duration, 0),
      start_time: typeof state.start_time === 'number' ? state.start_time : null,
      stop_time: typeof state.stop_time === 'number' ? state.stop_time : null,
      stop_reason: orNull(str(state.stop_reason)),
    },
    search: isRecord(body.search) ? readSearchState(body.search) : null,
    refresh: isRecord(body.refresh) ? readRefreshState(body.refresh) : null,
  };
}

function readSearchState(raw: Rec): CrawlSearchState {
  return {
    ...raw,
    status: str(raw.status) ?? 'DISABLED',
    documents: num(raw.documents, 0),
    built_at: orNull(str(raw.built_at)),
    generation: typeof raw.generation === 'number' ? raw.generation : null,
  };
}

/**
 * Read a refresh block: nested under `refresh` (the status record) or at the top level (the
 * answer of the refresh calls), as the service's SDKs accept both.
 *
 * @example
 * readRefreshState({ refresh: { enabled: true, interval_seconds: 86400, status: 'SCHEDULED' } }).enabled // true
 */
export function readRefreshState(body: unknown): CrawlRefreshState {
  const raw = isRecord(body) ? (isRecord(body.refresh) ? body.refresh : body) : {};
  return {
    ...raw,
    enabled: raw.enabled === true,
    interval_seconds: num(raw.interval_seconds, 0),
    status: str(raw.status) ?? (raw.enabled === true ? 'SCHEDULED' : 'DISABLED'),
    generation: num(raw.generation, 0),
    last_run_at: orNull(str(raw.last_run_at)),
    next_run_at: orNull(str(raw.next_run_at)),
    consecutive_failures: num(raw.consecutive_failures, 0),
  };
}

/**
 * Read one page of the text URL listing (docs/decisions.md D10): a URL a line, and for failed and skipped URLs
 * `url,reason`. The reason follows the last comma (reasons hold none; URLs may), so a URL with
 * a comma in it comes back whole.
 *
 * @example
 * readUrlLines('https://a.test/x,y,http_404\n', 'failed') // [{ url: 'https://a.test/x,y', status: 'failed', reason: 'http_404' }]
 */
export function readUrlLines(text: string, status: CrawlUrlStatus): CrawlUrl[] {
  const out: CrawlUrl[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const comma = status === 'failed' || status === 'skipped' ? line.lastIndexOf(',') : -1;
    out.push(comma < 0 ? { url: line, status } : { url: line.slice(0, comma), status, reason: line.slice(comma + 1) });
  }
  return out;
}

/**
 * Read a search answer: every list present, each skipped crawl named by `crawler_uuid`.
 *
 * @example
 * readSearch({ results: [], skipped: [{ crawler_uuid: 'c', reason: 'search_not_ready' }] }).skipped[0]?.reason
 */
export function readSearch(body: unknown, asked: { query: string; limit?: number | undefined }): SearchResponse {
  const raw = isRecord(body) ? body : {};
  const results = Array.isArray(raw.results) ? raw.results.filter(isRecord) : [];
  const skipped = Array.isArray(raw.skipped) ? raw.skipped.filter(isRecord) : [];
  return {
    ...raw,
    query: str(raw.query) ?? asked.query,
    mode: str(raw.mode) ?? 'hybrid',
    limit: num(raw.limit, asked.limit ?? results.length),
    results: results.map((r, i) => ({
      ...r,
      rank: num(r.rank, i + 1),
      score: num(r.score, 0),
      crawler_uuid: str(r.crawler_uuid) ?? str(r.crawl) ?? '',
      url: str(r.url) ?? '',
      title: orNull(str(r.title)),
      text: str(r.text) ?? str(r.snippet) ?? '',
      contents_url: orNull(str(r.contents_url)),
    })),
    skipped: skipped.map((s) => ({
      ...s,
      crawler_uuid: str(s.crawler_uuid) ?? str(s.crawl) ?? '',
      reason: str(s.reason) ?? 'unknown',
      status: orNull(str(s.status)),
    })),
    cursor: orNull(str(raw.cursor)),
  };
}

/**
 * The text of a prompt's token frame: a JSON string (the live wire), the older `{"text": …}`,
 * or bare text.
 *
 * @example
 * readToken('"The"') // 'The'
 */
export function readToken(data: string): string {
  try {
    const parsed: unknown = JSON.parse(data);
    if (typeof parsed === 'string') return parsed;
    if (isRecord(parsed) && typeof parsed.text === 'string') return parsed.text;
  } catch {}
  return data;
}
