/**
 * One run of an emulated crawl, the first or a refresh: seeds, robots.txt and sitemaps, a
 * frontier worked by `max_concurrency` workers, each page fetched, recorded, indexed and told,
 * and the run's end.
 */
import { createHash } from 'node:crypto';
import type { ContentFormat } from '../../crawler/schema.js';
import type { EmulatedCrawl, PageRecord, Parsed } from './crawl.js';
import { PageFetcher } from './fetch-page.js';
import { extract, format, parsePage } from './formats.js';
import { LOOPBACK, parseRobots, pathMatcher } from './scope.js';

/** A URL waiting in the frontier. */
interface Queued {
  url: string;
  depth: number;
}

/** Where a discovery crawl may go, from its first seed. */
interface Scope {
  first: URL;
  basePath: string;
  excluded: ((path: string) => boolean) | undefined;
  onlyIncluded: ((path: string) => boolean) | undefined;
}

export class CrawlRun {
  private readonly c: Parsed;
  private readonly discovery: boolean;
  private readonly headers: Record<string, string>;
  private readonly changed: string[] = [];
  private readonly seen = new Set<string>();
  private readonly queue: Queued[];
  /** Idle workers wait here until a URL is queued or the crawl runs dry. */
  private waiters: (() => void)[] = [];
  /** The links a page added to the frontier, told once per page. */
  private discovered: string[] = [];
  private scope: Scope | undefined;
  private robots: ReturnType<typeof parseRobots> | undefined;
  private stop: string | null = null;
  private visited: number;
  private active = 0;
  private deadline = Number.POSITIVE_INFINITY;

  constructor(
    private readonly crawl: EmulatedCrawl,
    private readonly isRefresh: boolean,
  ) {
    this.c = crawl.config;
    this.discovery = this.c.url !== undefined;
    this.headers = { ...(this.c.headers ?? {}) };
    if (this.c.user_agent) this.headers['user-agent'] = this.c.user_agent;
    this.queue = crawl.queue;
    this.visited = isRefresh ? 0 : crawl.count('visited');
  }

  async execute(): Promise<void> {
    const crawl = this.crawl;
    crawl.status = 'RUNNING';
    if (!this.isRefresh) {
      crawl.startedAt = crawl.host.now();
      crawl.host.emit(crawl, 'crawler_started', {});
    }
    const seeds = await this.readSeeds();
    if (!seeds) return;
    const first = seeds[0] ? new URL(seeds[0]) : undefined;
    if (!first) {
      crawl.finish(false, 'seed_url_failed');
      return;
    }
    this.scope = this.scopeOf(first);
    await this.readRobots(first);
    this.queue.length = 0;
    for (const s of seeds) this.enqueue(s, 0);
    await this.readSitemaps(first);
    this.deadline = this.c.max_duration ? crawl.host.now() + this.c.max_duration * 1000 : Number.POSITIVE_INFINITY;
    const concurrency = Math.max(1, this.c.max_concurrency ?? 4);
    const fetcher = new PageFetcher(concurrency);
    try {
      await Promise.all(Array.from({ length: concurrency }, () => this.worker(fetcher)));
    } finally {
      fetcher.close();
    }
    this.settle();
  }

  /** The seed URLs, or undefined when they could not be read (the crawl is then finished). */
  private async readSeeds(): Promise<string[] | undefined> {
    const c = this.c;
    try {
      if (c.url) return [c.url];
      if (c.url_list) return [...c.url_list];
      if (c.remote_url_list) {
        const remote = new URL(c.remote_url_list);
        if (!LOOPBACK.test(remote.hostname))
          throw new Error('the emulator fetches remote URL lists from this machine only');
        const res = await fetch(remote, { signal: this.crawl.controller.signal });
        return (await res.text())
          .split(/\r?\n/)
          .map((s) => s.trim())
          .filter((s) => /^https?:\/\//.test(s));
      }
      return [];
    } catch (error) {
      this.crawl.seedError = error instanceof Error ? error.message : String(error);
      this.crawl.finish(false, 'seed_url_failed');
      return undefined;
    }
  }

  private scopeOf(first: URL): Scope {
    const c = this.c;
    return {
      first,
      basePath: first.pathname.endsWith('/') ? first.pathname : first.pathname.replace(/[^/]*$/, ''),
      excluded: c.exclude_paths?.length ? pathMatcher(c.exclude_paths) : undefined,
      onlyIncluded: c.include_only_paths?.length ? pathMatcher(c.include_only_paths) : undefined,
    };
  }

  private async readRobots(first: URL): Promise<void> {
    if (!this.discovery || this.c.respect_robots_txt === false || !LOOPBACK.test(first.hostname)) return;
    try {
      const res = await fetch(new URL('/robots.txt', first), {
        headers: this.headers,
        signal: this.crawl.controller.signal,
      });
      if (res.ok) this.robots = parseRobots(await res.text());
    } catch {}
  }

  private async readSitemaps(first: URL): Promise<void> {
    if (!this.discovery || !this.c.use_sitemaps) return;
    const maps = this.robots?.sitemaps.length ? this.robots.sitemaps : [new URL('/sitemap.xml', first).href];
    for (const map of maps) {
      try {
        if (!LOOPBACK.test(new URL(map).hostname)) continue;
        const res = await fetch(map, { headers: this.headers, signal: this.crawl.controller.signal });
        if (!res.ok) continue;
        for (const loc of parsePage(await res.text()).root.querySelectorAll('loc'))
          this.enqueue(loc.text.trim(), 1, first.href);
      } catch {}
    }
    this.told(first.href);
  }

  /** Why a discovered URL on another host may not be followed, if it may not. */
  private hostProblem(url: URL, seed: URL): string | undefined {
    const c = this.c;
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

  /** Why this URL is out of the crawl's scope, if it is. */
  private outOfScope(url: URL, depth: number): string | undefined {
    const c = this.c;
    const scope = this.scope;
    if (!this.discovery || !scope) return LOOPBACK.test(url.hostname) ? undefined : 'offline_emulator';
    const hostProblem = this.hostProblem(url, scope.first);
    if (hostProblem) return hostProblem;
    if (
      url.hostname === scope.first.hostname &&
      !c.ignore_base_path_restriction &&
      !url.pathname.startsWith(scope.basePath)
    )
      return 'base_path';
    if (scope.excluded?.(url.pathname)) return 'exclude_paths';
    if (scope.onlyIncluded && !scope.onlyIncluded(url.pathname) && depth > 0) return 'include_only_paths';
    if (this.robots && url.hostname === scope.first.hostname && !this.robots.allowed(url.pathname)) return 'robots_txt';
    if (c.max_depth !== undefined && depth > c.max_depth) return 'max_depth';
    return undefined;
  }

  private enqueue(raw: string, depth: number, from?: string): void {
    let url: URL;
    try {
      url = new URL(raw, from);
    } catch {
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return;
    url.hash = '';
    const href = url.href;
    if (this.seen.has(href)) return;
    this.seen.add(href);
    const reason = this.outOfScope(url, depth);
    if (reason) {
      if (this.isRefresh) return;
      this.crawl.pages.set(href, { url: href, status: 'skipped', reason, depth });
      this.crawl.host.emit(this.crawl, 'crawler_url_skipped', { urls: { [href]: reason } });
      return;
    }
    this.queue.push({ url: href, depth });
    if (from) this.discovered.push(href);
    this.wake();
  }

  private told(origin: string): void {
    if (this.discovered.length > 0)
      this.crawl.host.emit(this.crawl, 'crawler_url_discovered', { origin, discovered_urls: this.discovered });
    this.discovered = [];
  }

  private wake(all = false): void {
    const woken = all ? this.waiters : this.waiters.splice(0, 1);
    if (all) this.waiters = [];
    for (const w of woken) w();
  }

  /** Why the run stops taking URLs, once it does. */
  private stopReason(): string | null {
    const c = this.c;
    const crawl = this.crawl;
    // 0 means no limit (the service's SDKs).
    if (!this.stop && c.page_limit && this.visited + this.active >= c.page_limit) this.stop = 'page_limit';
    if (!this.stop && c.max_api_credit && crawl.credits >= c.max_api_credit) this.stop = 'max_api_credit';
    if (!this.stop && crawl.host.now() > this.deadline) this.stop = 'max_duration';
    return this.stop;
  }

  private async worker(fetcher: PageFetcher): Promise<void> {
    const crawl = this.crawl;
    for (;;) {
      if (crawl.cancelled || this.stopReason()) {
        this.wake(true);
        return;
      }
      const next = this.queue.shift();
      if (next) crawl.inFlight.add(next.url);
      crawl.pending = this.queue.length + crawl.inFlight.size;
      if (!next) {
        if (this.active === 0) {
          this.wake(true);
          return;
        }
        await new Promise<void>((r) => this.waiters.push(r));
        continue;
      }
      this.active++;
      crawl.credits++;
      const gone = await this.visit(fetcher, next);
      if (gone) {
        this.active--;
        this.wake(true);
        return;
      }
      this.active--;
      if (this.active === 0 && this.queue.length === 0) this.wake(true);
      if (this.c.delay) await new Promise((r) => setTimeout(r, this.c.delay));
    }
  }

  /** Fetch one URL and record it; true when the crawl was cancelled meanwhile. */
  private async visit(fetcher: PageFetcher, next: Queued): Promise<boolean> {
    const crawl = this.crawl;
    const started = Date.now();
    try {
      const res = await fetcher.get(next.url, {
        headers: this.headers,
        signal: crawl.controller.signal,
        timeout: 30_000,
      });
      const contentType = res.headers['content-type'] ?? '';
      const record: PageRecord = {
        url: next.url,
        status: res.ok ? 'visited' : 'failed',
        depth: next.depth,
        http_status: res.status,
        content_type: contentType,
        headers: res.headers,
        fetched_at: new Date(crawl.host.now()).toISOString(),
        duration_ms: Date.now() - started,
      };
      if (!res.ok) {
        record.reason = `http_${res.status}`;
        crawl.pages.set(next.url, record);
        crawl.failed(next.url, 'ERR::SCRAPE::BAD_UPSTREAM_RESPONSE');
      } else {
        this.visited++;
        this.keep(next, record, res.body, res.status);
      }
    } catch (error) {
      if (crawl.cancelled) return true;
      // A listing line is `url,reason`: the reason is one word, the detail kept beside it.
      crawl.pages.set(next.url, {
        url: next.url,
        status: 'failed',
        reason: 'network_error',
        error: error instanceof Error ? error.message : String(error),
        depth: next.depth,
      });
      crawl.failed(next.url, 'ERR::SCRAPE::NETWORK_ERROR');
    } finally {
      crawl.inFlight.delete(next.url);
    }
    return false;
  }

  /** A page fetched well: stored, indexed, told, and its links queued. */
  private keep(next: Queued, record: PageRecord, body: string, status: number): void {
    const crawl = this.crawl;
    const c = this.c;
    record.html = body;
    record.hash = createHash('sha256').update(body).digest('hex');
    const page = /html/i.test(record.content_type ?? '') || /^\s*</.test(body) ? parsePage(body) : undefined;
    record.title = page?.title ?? '';
    if (page && c.extraction_rules) record.extracted = extract(page.root, c.extraction_rules);
    const previous = crawl.pages.get(next.url);
    crawl.pages.set(next.url, record);
    if (previous?.hash !== record.hash && this.isRefresh) this.changed.push(next.url);
    if (c.search && (previous?.hash !== record.hash || !this.isRefresh))
      crawl.index.put(next.url, record.title ?? '', format(body, 'text'));
    const formats: ContentFormat[] = [...(c.content_formats ?? [])];
    crawl.host.emit(crawl, 'crawler_url_visited', {
      url: next.url,
      scrape: { status_code: status, content: Object.fromEntries(formats.map((f) => [f, format(body, f)])) },
    });
    if (page && this.discovery) {
      for (const link of page.links) {
        if (link.nofollow && !c.ignore_no_follow) continue;
        this.enqueue(link.href, next.depth + 1, next.url);
      }
      this.told(next.url);
    }
  }

  /** The run ended: cancelled, a refresh done, or the first run finished. */
  private settle(): void {
    const crawl = this.crawl;
    crawl.pending = 0;
    this.queue.length = 0;
    if (crawl.cancelled) {
      crawl.status = 'CANCELLED';
      crawl.isSuccess = false;
      crawl.stopReason = 'user_cancelled';
      crawl.endedAt = crawl.host.now();
      crawl.host.emit(crawl, 'crawler_cancelled', {});
      return;
    }
    if (this.isRefresh) {
      this.settleRefresh();
      return;
    }
    if (this.stop) crawl.host.emit(crawl, 'crawler_stopped', {});
    const visitedAny = crawl.count('visited') > 0;
    // Nothing fetched: every seed failed or was skipped.
    crawl.finish(visitedAny, this.stop ?? (visitedAny ? 'no_more_urls' : 'seed_url_failed'));
  }

  private settleRefresh(): void {
    const crawl = this.crawl;
    const changed = this.changed;
    crawl.lastChanged = changed;
    crawl.status = 'DONE';
    if (this.c.search && changed.length > 0) crawl.searchGeneration++;
    const now = crawl.host.now();
    crawl.host.emit(crawl, 'crawler_updated', {
      refresh: {
        ...crawl.refreshBlock(),
        at: new Date(crawl.lastRefreshAt ?? now).toISOString(),
        added: 0,
        updated: changed.length,
        removed: 0,
        unchanged: Math.max(0, this.visited - changed.length),
        failed: crawl.count('failed'),
        duration_ms: now - (crawl.lastRefreshAt ?? now),
      },
      changed_urls: changed,
      documents: { updated: changed.slice(0, 100), removed: [], truncated: changed.length > 100 },
    });
  }
}
