/**
 * One emulated crawl: a real crawl over HTTP of sites on this machine only, with the limits,
 * filters, formats, search index, refresh runs and webhook events of the spec.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { z } from 'zod';
import type { ContentFormat, crawlConfigSchema } from '../../crawler/schema.js';
import type { CrawlerEvent } from '../../webhooks/constants.js';
import { PageFetcher } from './fetch-page.js';
import { extract, format, parsePage } from './formats.js';
import { SearchIndex } from './search.js';

/** One URL the crawl met. */
export interface PageRecord {
  url: string;
  status: 'visited' | 'failed' | 'skipped';
  reason?: string;
  depth: number;
  http_status?: number;
  title?: string;
  html?: string;
  hash?: string;
  /** What went wrong, beside the one-word `reason`. */
  error?: string;
  content_type?: string;
  headers?: Record<string, string>;
  fetched_at?: string;
  duration_ms?: number;
  extracted?: Record<string, unknown>;
}

/** The crawler's side of the emulator: how it reaches sites, tells time and delivers events. */
export interface CrawlHost {
  now(): number;
  emit(crawl: EmulatedCrawl, event: CrawlerEvent, data: Record<string, unknown>): void;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\]|[a-z0-9-]+\.localhost)$/i;

/** Glob-style path patterns: `*` within a segment, `**` across segments; a pattern without `*` is a prefix. */
export function pathMatcher(patterns: readonly string[]): (path: string) => boolean {
  const regexes = patterns.map((p) => {
    if (!p.includes('*')) return new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')}`);
    const body = p
      .split('**')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
      .join('.*');
    return new RegExp(`^${body}$`);
  });
  return (path) => regexes.some((r) => r.test(path));
}

/** robots.txt rules for `User-agent: *` (longest match wins, Allow over Disallow on a tie). */
export function parseRobots(text: string): { allowed(path: string): boolean; sitemaps: string[] } {
  const rules: { allow: boolean; path: string }[] = [];
  const sitemaps: string[] = [];
  let applies = false;
  let inGroup = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*/, '').trim();
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const field = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (field === 'sitemap') sitemaps.push(value);
    else if (field === 'user-agent') {
      if (!inGroup) applies = false;
      inGroup = true;
      if (value === '*') applies = true;
    } else {
      inGroup = false;
      if (applies && (field === 'allow' || field === 'disallow') && value)
        rules.push({ allow: field === 'allow', path: value });
    }
  }
  return {
    sitemaps,
    allowed(path) {
      let best: { allow: boolean; path: string } | undefined;
      for (const r of rules) {
        if (
          path.startsWith(r.path.replace(/\*$/, '')) &&
          (!best || r.path.length > best.path.length || (r.path.length === best.path.length && r.allow))
        )
          best = r;
      }
      return best?.allow ?? true;
    },
  };
}

type Parsed = z.output<typeof crawlConfigSchema>;

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
  private cancelled = false;
  private readonly controller = new AbortController();

  constructor(
    readonly config: Parsed,
    readonly key: string,
    private readonly host: CrawlHost,
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

  /** The counters of D11: times in Unix seconds, null until they happen. */
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

  /** The `search` block of D11, or null when the crawl builds no index. */
  searchBlock(): Record<string, unknown> | null {
    if (!this.config.search) return null;
    const status = { NONE: 'DISABLED', BUILDING: 'BUILDING', READY: 'READY', FAILED: 'FAILED' }[this.searchState];
    return {
      status,
      documents: this.index.size,
      built_at: this.searchBuiltAt === null ? null : new Date(this.searchBuiltAt).toISOString(),
      generation: this.searchGeneration,
    };
  }

  /** The `refresh` block of D11, or null when the crawl does not refresh itself. */
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

  /** The status record of D11, under the spec's names and the service's. */
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

  private pending = 0;

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

  private allowedHost(url: URL, seed: URL): string | undefined {
    const c = this.config;
    if (url.hostname !== seed.hostname) {
      const sub = url.hostname.endsWith(`.${seed.hostname}`);
      if (sub) {
        if (c.follow_internal_subdomains === false) return 'subdomain';
        if (
          c.allowed_internal_subdomains?.length &&
          !c.allowed_internal_subdomains.some((d) => url.hostname === d || url.hostname.startsWith(`${d}.`))
        ) {
          return 'subdomain_not_allowed';
        }
      } else {
        if (!c.follow_external_links) return 'external_link';
        if (
          c.allowed_external_domains?.length &&
          !c.allowed_external_domains.some((d) => url.hostname === d || url.hostname.endsWith(`.${d}`))
        ) {
          return 'external_domain_not_allowed';
        }
      }
    }
    if (!LOOPBACK.test(url.hostname)) return 'offline_emulator';
    return undefined;
  }

  private async run(isRefresh: boolean): Promise<void> {
    const c = this.config;
    const discovery = c.url !== undefined;
    this.status = 'RUNNING';
    if (!isRefresh) {
      this.startedAt = this.host.now();
      this.host.emit(this, 'crawler_started', {});
    }
    const changed: string[] = [];
    let seeds: string[] = [];
    try {
      if (c.url) seeds = [c.url];
      else if (c.url_list) seeds = [...c.url_list];
      else if (c.remote_url_list) {
        const remote = new URL(c.remote_url_list);
        if (!LOOPBACK.test(remote.hostname))
          throw new Error('the emulator fetches remote URL lists from this machine only');
        const res = await fetch(remote, { signal: this.controller.signal });
        seeds = (await res.text())
          .split(/\r?\n/)
          .map((s) => s.trim())
          .filter((s) => /^https?:\/\//.test(s));
      }
    } catch (error) {
      this.seedError = error instanceof Error ? error.message : String(error);
      this.finish(false, 'seed_url_failed');
      return;
    }
    const first = seeds[0] ? new URL(seeds[0]) : undefined;
    if (!first) {
      this.finish(false, 'seed_url_failed');
      return;
    }
    const basePath = first.pathname.endsWith('/') ? first.pathname : first.pathname.replace(/[^/]*$/, '');
    const excluded = c.exclude_paths?.length ? pathMatcher(c.exclude_paths) : undefined;
    const onlyIncluded = c.include_only_paths?.length ? pathMatcher(c.include_only_paths) : undefined;
    const headers: Record<string, string> = { ...(c.headers ?? {}) };
    if (c.user_agent) headers['user-agent'] = c.user_agent;

    let robots: ReturnType<typeof parseRobots> | undefined;
    if (discovery && c.respect_robots_txt !== false && LOOPBACK.test(first.hostname)) {
      try {
        const res = await fetch(new URL('/robots.txt', first), { headers, signal: this.controller.signal });
        if (res.ok) robots = parseRobots(await res.text());
      } catch {}
    }
    const seen = new Set<string>();
    const queue = this.queue;
    queue.length = 0;
    // Idle workers wait here until a URL is queued or the crawl runs dry.
    let waiters: (() => void)[] = [];
    const wake = (all = false) => {
      const woken = all ? waiters : waiters.splice(0, 1);
      if (all) waiters = [];
      for (const w of woken) w();
    };
    const enqueue = (raw: string, depth: number, from?: string) => {
      let url: URL;
      try {
        url = new URL(raw, from);
      } catch {
        return;
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return;
      url.hash = '';
      const href = url.href;
      if (seen.has(href)) return;
      seen.add(href);
      const skip = (reason: string) => {
        if (isRefresh) return;
        this.pages.set(href, { url: href, status: 'skipped', reason, depth });
        this.host.emit(this, 'crawler_url_skipped', { urls: { [href]: reason } });
      };
      if (discovery) {
        const hostProblem = this.allowedHost(url, first);
        if (hostProblem) return skip(hostProblem);
        if (url.hostname === first.hostname && !c.ignore_base_path_restriction && !url.pathname.startsWith(basePath))
          return skip('base_path');
        if (excluded?.(url.pathname)) return skip('exclude_paths');
        if (onlyIncluded && !onlyIncluded(url.pathname) && depth > 0) return skip('include_only_paths');
        if (robots && url.hostname === first.hostname && !robots.allowed(url.pathname)) return skip('robots_txt');
        if (c.max_depth !== undefined && depth > c.max_depth) return skip('max_depth');
      } else if (!LOOPBACK.test(url.hostname)) {
        return skip('offline_emulator');
      }
      queue.push({ url: href, depth });
      if (from) discovered.push(href);
      wake();
    };
    // The links a page added to the frontier, told once per page.
    let discovered: string[] = [];
    const told = (origin: string) => {
      if (discovered.length > 0)
        this.host.emit(this, 'crawler_url_discovered', { origin, discovered_urls: discovered });
      discovered = [];
    };
    for (const s of seeds) enqueue(s, 0);
    if (discovery && c.use_sitemaps) {
      const maps = robots?.sitemaps.length ? robots.sitemaps : [new URL('/sitemap.xml', first).href];
      for (const map of maps) {
        try {
          if (!LOOPBACK.test(new URL(map).hostname)) continue;
          const res = await fetch(map, { headers, signal: this.controller.signal });
          if (!res.ok) continue;
          for (const loc of parsePage(await res.text()).root.querySelectorAll('loc'))
            enqueue(loc.text.trim(), 1, first.href);
        } catch {}
      }
      told(first.href);
    }

    const deadline = c.max_duration ? this.host.now() + c.max_duration * 1000 : Number.POSITIVE_INFINITY;
    const concurrency = Math.max(1, c.max_concurrency ?? 4);
    let stop: string | null = null;
    let visited = isRefresh ? 0 : this.count('visited');
    let active = 0;
    const formats: ContentFormat[] = [...(c.content_formats ?? [])];
    const fetcher = new PageFetcher(concurrency);
    const worker = async () => {
      for (;;) {
        if (this.cancelled) {
          wake(true);
          return;
        }
        // 0 means no limit (the service's SDKs).
        if (!stop && c.page_limit && visited + active >= c.page_limit) stop = 'page_limit';
        if (!stop && c.max_api_credit && this.credits >= c.max_api_credit) stop = 'max_api_credit';
        if (!stop && this.host.now() > deadline) stop = 'max_duration';
        if (stop) {
          wake(true);
          return;
        }
        const next = queue.shift();
        if (next) this.inFlight.add(next.url);
        this.pending = queue.length + this.inFlight.size;
        if (!next) {
          if (active === 0) {
            wake(true);
            return;
          }
          await new Promise<void>((r) => waiters.push(r));
          continue;
        }
        active++;
        this.credits++;
        const started = Date.now();
        try {
          const res = await fetcher.get(next.url, { headers, signal: this.controller.signal, timeout: 30_000 });
          const contentType = res.headers['content-type'] ?? '';
          const body = res.body;
          const record: PageRecord = {
            url: next.url,
            status: res.ok ? 'visited' : 'failed',
            depth: next.depth,
            http_status: res.status,
            content_type: contentType,
            headers: res.headers,
            fetched_at: new Date(this.host.now()).toISOString(),
            duration_ms: Date.now() - started,
          };
          if (!res.ok) {
            record.reason = `http_${res.status}`;
            this.pages.set(next.url, record);
            this.failed(next.url, 'ERR::SCRAPE::BAD_UPSTREAM_RESPONSE');
          } else {
            record.html = body;
            record.hash = createHash('sha256').update(body).digest('hex');
            const page = /html/i.test(contentType) || /^\s*</.test(body) ? parsePage(body) : undefined;
            record.title = page?.title ?? '';
            if (page && c.extraction_rules) record.extracted = extract(page.root, c.extraction_rules);
            const previous = this.pages.get(next.url);
            this.pages.set(next.url, record);
            visited++;
            if (previous?.hash !== record.hash && isRefresh) changed.push(next.url);
            if (c.search && (previous?.hash !== record.hash || !isRefresh))
              this.index.put(next.url, record.title ?? '', format(body, 'text'));
            this.host.emit(this, 'crawler_url_visited', {
              url: next.url,
              scrape: {
                status_code: res.status,
                content: Object.fromEntries(formats.map((f) => [f, format(body, f)])),
              },
            });
            if (page && discovery) {
              for (const link of page.links) {
                if (link.nofollow && !c.ignore_no_follow) continue;
                enqueue(link.href, next.depth + 1, next.url);
              }
              told(next.url);
            }
          }
        } catch (error) {
          if (this.cancelled) {
            active--;
            wake(true);
            return;
          }
          // A listing line is `url,reason`: the reason is one word, the detail kept beside it.
          this.pages.set(next.url, {
            url: next.url,
            status: 'failed',
            reason: 'network_error',
            error: error instanceof Error ? error.message : String(error),
            depth: next.depth,
          });
          this.failed(next.url, 'ERR::SCRAPE::NETWORK_ERROR');
        } finally {
          this.inFlight.delete(next.url);
        }
        active--;
        if (active === 0 && queue.length === 0) wake(true);
        if (c.delay) await new Promise((r) => setTimeout(r, c.delay));
      }
    };
    try {
      await Promise.all(Array.from({ length: concurrency }, worker));
    } finally {
      fetcher.close();
    }
    this.pending = 0;
    queue.length = 0;
    if (this.cancelled) {
      this.status = 'CANCELLED';
      this.isSuccess = false;
      this.stopReason = 'user_cancelled';
      this.endedAt = this.host.now();
      this.host.emit(this, 'crawler_cancelled', {});
      return;
    }
    if (isRefresh) {
      this.lastChanged = changed;
      this.status = 'DONE';
      if (c.search && changed.length > 0) this.searchGeneration++;
      this.host.emit(this, 'crawler_updated', {
        refresh: {
          ...this.refreshBlock(),
          at: new Date(this.lastRefreshAt ?? this.host.now()).toISOString(),
          added: 0,
          updated: changed.length,
          removed: 0,
          unchanged: Math.max(0, visited - changed.length),
          failed: this.count('failed'),
          duration_ms: this.host.now() - (this.lastRefreshAt ?? this.host.now()),
        },
        changed_urls: changed,
        documents: { updated: changed.slice(0, 100), removed: [], truncated: changed.length > 100 },
      });
      return;
    }
    if (stop) this.host.emit(this, 'crawler_stopped', {});
    const visitedAny = this.count('visited') > 0;
    // Nothing fetched: every seed failed or was skipped.
    this.finish(visitedAny, stop ?? (visitedAny ? 'no_more_urls' : 'seed_url_failed'));
  }

  private failed(url: string, error: string): void {
    this.host.emit(this, 'crawler_url_failed', { url, error, scrape_config: { url }, links: { log: null } });
  }

  private finish(success: boolean, reason: string): void {
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
