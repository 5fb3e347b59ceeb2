/**
 * One emulated crawl: a real crawl over HTTP of sites on this machine only, with the limits,
 * filters, formats, search index, refresh runs and webhook events of the spec.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { ContentFormat, CrawlConfig } from 'cloud-browser/crawler';
import type { CrawlerEvent } from 'cloud-browser/webhooks';
import type { BodyKind } from './decode.js';
import { CrawlRun } from './run.js';
import { SearchIndex } from './search.js';

/** One URL the crawl met. */
export interface PageRecord {
  url: string;
  status: 'visited' | 'failed' | 'skipped';
  reason?: string;
  depth: number;
  http_status?: number;
  title?: string;
  /** The decoded HTML of an HTML page. */
  html?: string;
  /** The decoded text of a text page (text/plain, text/markdown…). */
  text?: string;
  /** What the crawler made of the body: HTML and text are converted and indexed, the rest not. */
  kind?: BodyKind;
  /** The encoding the text was decoded with. */
  encoding?: string;
  /** The body's size in bytes, decoded. */
  size?: number;
  /** Where a redirect pointed, for a URL skipped as `redirected` (or refused out of scope). */
  redirect_to?: string;
  /** The headings of its main content, found when its formats were converted. */
  headings?: string[];
  /** Each format, converted once on first use and kept. */
  formats?: Partial<Record<ContentFormat, string>>;
  hash?: string;
  /** What went wrong, beside the one-word `reason`. */
  error?: string;
  content_type?: string;
  headers?: Record<string, string>;
  fetched_at?: string;
  duration_ms?: number;
  extracted?: Record<string, unknown>;
}

/** The emulator's own bounds on every crawl. */
export interface CrawlLimits {
  /** The most bytes of one response, on the wire and after decoding; a larger one fails as `too_large`. */
  maxResponseBytes: number;
  /** The pages a crawl without `page_limit` (or with 0) visits at most; it then stops with `page_limit`. */
  pageLimit: number;
}

/** @default */
export const CRAWL_LIMITS_DEFAULTS: CrawlLimits = { maxResponseBytes: 10 * 1024 * 1024, pageLimit: 10_000 };

/** The crawler's side of the emulator: how it reaches sites, tells time and delivers events. */
export interface CrawlHost {
  now(): number;
  /** Deliver `event` when the crawl asked for it; `data` may be made only then (a page's contents). */
  emit(
    crawl: EmulatedCrawl,
    event: CrawlerEvent,
    data: Record<string, unknown> | (() => Record<string, unknown>),
  ): void;
  readonly limits: CrawlLimits;
}

export type Parsed = CrawlConfig;

/** A crawl run by the emulator. */
export class EmulatedCrawl {
  readonly uuid = randomUUID();
  status: 'PENDING' | 'RUNNING' | 'DONE' | 'CANCELLED' = 'PENDING';
  isSuccess: boolean | null = null;
  stopReason: string | null = null;
  readonly pages = new Map<string, PageRecord>();
  searchState: 'NONE' | 'BUILDING' | 'READY' | 'FAILED';
  /** When the index was last built, ms; and how many times. */
  searchBuiltAt: number | null = null;
  searchGeneration = 0;
  readonly index = new SearchIndex();
  credits = 0;
  startedAt = 0;
  endedAt = 0;
  refreshRuns = 0;
  /** Why the seeds could not be read, when they could not. */
  seedError: string | undefined;
  lastRefreshAt: number | null = null;
  lastChanged: string[] = [];
  /** URLs queued and not yet fetched, and those being fetched. */
  readonly queue: { url: string; depth: number }[] = [];
  readonly inFlight = new Set<string>();
  running: Promise<void> | undefined;
  /** @internal Whether `cancel()` was called; its signal aborts every request of the crawl. */
  cancelled = false;
  /** @internal */
  readonly controller = new AbortController();

  constructor(
    readonly config: Parsed,
    readonly key: string,
    /** @internal */
    readonly host: CrawlHost,
  ) {
    this.searchState = config.search ? 'BUILDING' : 'NONE';
    // One abort listener per request in flight: up to max_concurrency at once.
    setMaxListeners(0, this.controller.signal);
  }

  get isComplete(): boolean {
    return this.status === 'DONE' || this.status === 'CANCELLED';
  }

  get refreshInterval(): number {
    return this.config.refresh_interval ?? 86_400;
  }

  get nextRefreshAt(): number | null {
    if (!this.config.refresh || !this.isComplete || this.status === 'CANCELLED') return null;
    return (this.lastRefreshAt ?? this.endedAt) + this.refreshInterval * 1000;
  }

  count(status: PageRecord['status']): number {
    let n = 0;
    for (const p of this.pages.values()) if (p.status === status) n++;
    return n;
  }

  /** The counters of docs/decisions.md D11: times in Unix seconds, null until they happen. */
  state(): Record<string, unknown> {
    const end = this.endedAt || this.host.now();
    let extracted = 0;
    for (const p of this.pages.values()) if (p.extracted) extracted++;
    return {
      urls_visited: this.count('visited'),
      urls_extracted: extracted,
      urls_failed: this.count('failed'),
      urls_skipped: this.count('skipped'),
      urls_to_crawl: this.pending,
      api_credit_used: this.credits,
      duration: this.startedAt ? Math.round((end - this.startedAt) / 1000) : 0,
      start_time: this.startedAt ? Math.floor(this.startedAt / 1000) : null,
      stop_time: this.endedAt ? Math.floor(this.endedAt / 1000) : null,
      stop_reason: this.stopReason,
    };
  }

  /** The `search` block of docs/decisions.md D11, or null when the crawl builds no index. */
  searchBlock(): Record<string, unknown> | null {
    if (!this.config.search) return null;
    const status = { NONE: 'DISABLED', BUILDING: 'BUILDING', READY: 'READY', FAILED: 'FAILED' }[this.searchState];
    return {
      status,
      documents: this.index.docs,
      built_at: this.searchBuiltAt === null ? null : new Date(this.searchBuiltAt).toISOString(),
      generation: this.searchGeneration,
    };
  }

  /** The `refresh` block of docs/decisions.md D11, or null when the crawl does not refresh itself. */
  refreshBlock(): Record<string, unknown> | null {
    if (!this.config.refresh) return null;
    const next = this.nextRefreshAt;
    return {
      enabled: true,
      interval_seconds: this.refreshInterval,
      status: this.running && this.refreshRuns > 0 ? 'RUNNING' : next === null ? 'DISABLED' : 'SCHEDULED',
      generation: this.refreshRuns,
      last_run_at: this.lastRefreshAt === null ? null : new Date(this.lastRefreshAt).toISOString(),
      next_run_at: next === null ? null : new Date(next).toISOString(),
      consecutive_failures: 0,
    };
  }

  /** The status record of docs/decisions.md D11, under the spec's names and the service's. */
  record(): Record<string, unknown> {
    const complete = this.isComplete;
    return {
      crawler_uuid: this.uuid,
      uuid: this.uuid,
      status: this.status,
      is_finished: complete,
      is_complete: complete,
      is_success: complete ? this.isSuccess : null,
      state: this.state(),
      search: this.searchBlock(),
      refresh: this.refreshBlock(),
    };
  }

  /** @internal URLs queued or being fetched, as the run last counted them. */
  pending = 0;

  /** Start the first run. */
  start(): void {
    this.running = this.run(false).finally(() => {
      this.running = undefined;
    });
  }

  cancel(): void {
    if (this.isComplete) return;
    this.cancelled = true;
    this.controller.abort();
  }

  /** A refresh run: re-crawl in place, re-index only the pages whose content changed. */
  refresh(): Promise<void> {
    this.refreshRuns++;
    this.lastRefreshAt = this.host.now();
    this.running = this.run(true).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private run(isRefresh: boolean): Promise<void> {
    return new CrawlRun(this, isRefresh).execute();
  }

  /** @internal The run tells a URL failed. */
  failed(url: string, error: string): void {
    this.host.emit(this, 'crawler_url_failed', { url, error, scrape_config: { url }, links: { log: null } });
  }

  /** @internal The first run ended: the status, the search block and the event. */
  finish(success: boolean, reason: string): void {
    this.status = 'DONE';
    this.isSuccess = success;
    this.stopReason = reason;
    this.endedAt = this.host.now();
    if (this.config.search) {
      this.searchState = success ? 'READY' : 'FAILED';
      if (success) {
        this.searchBuiltAt = this.host.now();
        this.searchGeneration = 1;
      }
      this.host.emit(this, success ? 'crawler_search_ready' : 'crawler_search_failed', {
        search: this.searchBlock(),
      });
    }
    this.host.emit(this, 'crawler_finished', {});
  }
}
