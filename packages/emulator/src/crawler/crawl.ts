/**
 * One emulated crawl: a real crawl over HTTP of sites on this machine only, with the limits,
 * filters, formats, search index, refresh runs and webhook events of the spec.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { PageBodies } from './bodies.js';
import { SearchIndex } from './search.js';
import type { CrawlHost, PageRecord, Parsed } from './types.js';

export { CRAWL_LIMITS_DEFAULTS, type CrawlHost, type CrawlLimits, type PageRecord, type Parsed } from './types.js';

/** A crawl run by the emulator. */
export class EmulatedCrawl {
  readonly uuid = randomUUID();
  #status: 'PENDING' | 'RUNNING' | 'DONE' | 'CANCELLED' = 'PENDING';
  get status(): 'PENDING' | 'RUNNING' | 'DONE' | 'CANCELLED' {
    return this.#status;
  }
  #isSuccess: boolean | null = null;
  get isSuccess(): boolean | null {
    return this.#isSuccess;
  }
  #stopReason: string | null = null;
  get stopReason(): string | null {
    return this.#stopReason;
  }
  readonly pages = new Map<string, PageRecord>();
  /** Where the pages' bodies and formats are kept: a file, not the crawl's memory. */
  readonly bodies = new PageBodies();
  searchState: 'NONE' | 'BUILDING' | 'READY' | 'FAILED';
  /** When the index was last built, ms; and how many times. */
  searchBuiltAt: number | null = null;
  #searchGeneration: number = 0;
  get searchGeneration(): number {
    return this.#searchGeneration;
  }
  readonly index = new SearchIndex();
  #credits: number = 0;
  get credits(): number {
    return this.#credits;
  }
  #startedAt: number = 0;
  get startedAt(): number {
    return this.#startedAt;
  }
  #endedAt: number = 0;
  get endedAt(): number {
    return this.#endedAt;
  }
  refreshRuns = 0;
  /** Why the seeds could not be read, when they could not. */
  #seedError: string | undefined = undefined;
  get seedError(): string | undefined {
    return this.#seedError;
  }
  lastRefreshAt: number | null = null;
  #lastChanged: readonly string[] = [];
  get lastChanged(): readonly string[] {
    return this.#lastChanged;
  }
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
  #pending: number = 0;
  get pending(): number {
    return this.#pending;
  }

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
    return this.host.run(this, isRefresh);
  }

  /** @internal A run began: running; the first run's start time. */
  began(isRefresh: boolean): void {
    this.#status = 'RUNNING';
    if (!isRefresh) this.#startedAt = this.host.now();
  }

  /** @internal The seeds could not be read. */
  seedFailed(message: string): void {
    this.#seedError = message;
  }

  /** @internal One credit spent on a request. */
  charge(): void {
    this.#credits++;
  }

  /** @internal A URL is being fetched, or no longer; `queued` are waiting. */
  fetching(url: string, queued: number): void {
    this.inFlight.add(url);
    this.#pending = queued + this.inFlight.size;
  }

  fetched(url: string): void {
    this.inFlight.delete(url);
  }

  /** @internal How many URLs wait, besides those being fetched. */
  waiting(queued: number): void {
    this.#pending = queued + this.inFlight.size;
  }

  /** @internal The run was cancelled. */
  cancelledNow(): void {
    this.#pending = 0;
    this.#status = 'CANCELLED';
    this.#isSuccess = false;
    this.#stopReason = 'user_cancelled';
    this.#endedAt = this.host.now();
    this.bodies.settle();
  }

  /** @internal A refresh run ended with `changed` pages; the index is a generation newer when any changed. */
  refreshed(changed: readonly string[]): void {
    this.#pending = 0;
    this.#lastChanged = changed;
    this.#status = 'DONE';
    this.bodies.settle();
    if (this.config.search && changed.length > 0) this.#searchGeneration++;
  }

  /** @internal The run tells a URL failed. */
  failed(url: string, error: string): void {
    this.host.emit(this, 'crawler_url_failed', { url, error, scrape_config: { url }, links: { log: null } });
  }

  /** @internal The first run ended: the status, the search block and the event. */
  finish(success: boolean, reason: string): void {
    this.#pending = 0;
    this.#status = 'DONE';
    this.#isSuccess = success;
    this.#stopReason = reason;
    this.#endedAt = this.host.now();
    this.bodies.settle();
    if (this.config.search) {
      this.searchState = success ? 'READY' : 'FAILED';
      if (success) {
        this.searchBuiltAt = this.host.now();
        this.#searchGeneration = 1;
      }
      this.host.emit(this, success ? 'crawler_search_ready' : 'crawler_search_failed', {
        search: this.searchBlock(),
      });
    }
    this.host.emit(this, 'crawler_finished', {});
  }
}
