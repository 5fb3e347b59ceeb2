/**
 * One run of an emulated crawl, the first or a refresh: seeds, robots.txt and sitemaps, a
 * frontier worked by `max_concurrency` workers, each page fetched, recorded, indexed and told,
 * and the run's end. Every request, redirects, robots.txt, sitemaps and remote URL lists
 * included, goes only where the crawl's scope and the emulator's rule (loopback hosts) allow.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { CONTENT_FORMATS, type ContentFormat } from 'cloud-browser/crawler';
import { htmlText } from './convert.js';
import { converter, formatOf } from './converter.js';
import type { EmulatedCrawl } from './crawl.js';
import { type BodyType, bodyType, decodeAs, decodeText, detectEncoding, withoutBom } from './decode.js';
import { type FetchedPage, FetchFailure, type GetOptions, PageFetcher, RedirectRefused } from './fetch-page.js';
import { contentOf, extract, keepEncoded, missingFormats, sitemapLocs } from './formats.js';
import type { ParsedPage } from './page-reader.js';
import {
  ALLOW_ALL,
  DISALLOW_ALL,
  pageDirectives,
  parseRobotsTxt,
  productToken,
  ROBOTS_MAX_BYTES,
  type RobotsRules,
} from './robots.js';
import { LOOPBACK, pathMatcher } from './scope.js';
import type { PageRecord, Parsed } from './types.js';
import { normaliseUrl } from './urls.js';

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

/** Sitemaps read at most, index files and their leaves together, and how deep indexes nest. */
const MAX_SITEMAPS = 50;
const MAX_SITEMAP_DEPTH = 3;
/** RFC 9309 2.3.1.2: at least five redirects are followed for robots.txt. */
const ROBOTS_REDIRECTS = 5;
const PAGE_TIMEOUT_MS = 30_000;

export class CrawlRun {
  private readonly c: Parsed;
  private readonly discovery: boolean;
  private readonly headers: Record<string, string>;
  private readonly product: string;
  private readonly fetcher: PageFetcher;
  private readonly changed: string[] = [];
  private readonly seen = new Set<string>();
  /** Absolute links as written, once each. */
  private readonly rawSeen = new Set<string>();
  private readonly queue: Queued[];
  private readonly robots = new Map<string, Promise<RobotsRules>>();
  /** Idle workers wait here until a URL is queued or the crawl runs dry. */
  private waiters: (() => void)[] = [];
  /** The links a page added to the frontier, told once per page. */
  private discovered: string[] = [];
  private scope: Scope | undefined;
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
    this.product = productToken(this.c.user_agent);
    this.queue = crawl.queue;
    this.visited = isRefresh ? 0 : crawl.count('visited');
    this.fetcher = new PageFetcher(this.concurrency);
  }

  private get concurrency(): number {
    return Math.max(1, this.c.max_concurrency ?? 4);
  }

  /** The page limit: the crawl's, or the emulator's own when it set none (0 is none, as in the SDKs). */
  private get pageLimit(): number {
    return this.c.page_limit || this.crawl.host.limits.pageLimit;
  }

  async execute(): Promise<void> {
    const crawl = this.crawl;
    crawl.began(this.isRefresh);
    if (!this.isRefresh) crawl.host.emit(crawl, 'crawler_started', {});
    try {
      const seeds = await this.readSeeds();
      if (!seeds) return;
      const first = seeds[0] ? normaliseUrl(seeds[0]) : undefined;
      if (!first) {
        crawl.finish(false, 'seed_url_failed');
        return;
      }
      this.scope = this.scopeOf(first);
      this.queue.length = 0;
      for (const s of seeds) this.enqueue(s, 0);
      await this.readSitemaps(first);
      this.deadline = this.c.max_duration ? crawl.host.now() + this.c.max_duration * 1000 : Number.POSITIVE_INFINITY;
      await Promise.all(Array.from({ length: this.concurrency }, () => this.worker()));
    } finally {
      this.fetcher.close();
    }
    this.settle();
  }

  /** GET within the emulator's own rule: loopback only, redirects included, bounded. */
  private get(url: string, extra: Partial<GetOptions> = {}): Promise<FetchedPage> {
    return this.fetcher.get(url, {
      headers: this.headers,
      signal: this.crawl.controller.signal,
      timeout: PAGE_TIMEOUT_MS,
      maxBytes: this.crawl.host.limits.maxResponseBytes,
      follow: (to) => (LOOPBACK.test(to.hostname) ? undefined : 'offline_emulator'),
      ...extra,
    });
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
        const res = await this.get(remote.href);
        if (!res.ok) throw new Error(`the remote URL list answered ${res.status}`);
        return decodeText(res.body, bodyType(res.headers['content-type'], res.body))
          .text.split(/\r?\n/)
          .map((s) => s.trim())
          .filter((s) => /^https?:\/\//i.test(s));
      }
      return [];
    } catch (error) {
      this.crawl.seedFailed(error instanceof Error ? error.message : String(error));
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

  /** The robots.txt rules of `url`'s origin, read once per run (RFC 9309 2.3.1 on failures). */
  private robotsFor(url: URL): Promise<RobotsRules> {
    if (!this.discovery || this.c.respect_robots_txt === false) return Promise.resolve(ALLOW_ALL);
    let rules = this.robots.get(url.origin);
    if (!rules) {
      rules = this.readRobots(new URL('/robots.txt', url.origin).href);
      this.robots.set(url.origin, rules);
    }
    return rules;
  }

  private async readRobots(robotsUrl: string): Promise<RobotsRules> {
    try {
      const res = await this.get(robotsUrl, { maxRedirects: ROBOTS_REDIRECTS });
      if (res.ok) {
        const text = decodeText(res.body.subarray(0, ROBOTS_MAX_BYTES), bodyType('text/plain', res.body)).text;
        return parseRobotsTxt(robotsUrl, text, this.product);
      }
      return res.status >= 500 ? DISALLOW_ALL : ALLOW_ALL;
    } catch {
      // Unreachable: a crawler assumes complete disallow.
      return this.crawl.cancelled ? ALLOW_ALL : DISALLOW_ALL;
    }
  }

  /** Sitemaps named by robots.txt (else /sitemap.xml), index files followed to their leaves. */
  private async readSitemaps(first: URL): Promise<void> {
    if (!this.discovery || !this.c.use_sitemaps) return;
    const named = (await this.robotsFor(first)).sitemaps;
    const pending = (named.length ? named : [new URL('/sitemap.xml', first).href]).map((url) => ({ url, depth: 0 }));
    const read = new Set<string>();
    for (let next = pending.shift(); next && read.size < MAX_SITEMAPS; next = pending.shift()) {
      const url = normaliseUrl(next.url, first);
      if (!url || read.has(url.href) || !LOOPBACK.test(url.hostname)) continue;
      read.add(url.href);
      try {
        const res = await this.get(url.href);
        if (!res.ok) continue;
        let bytes = res.body;
        if (bytes[0] === 0x1f && bytes[1] === 0x8b)
          bytes = gunzipSync(bytes, { maxOutputLength: this.crawl.host.limits.maxResponseBytes });
        const { index, locs } = sitemapLocs(decodeText(bytes, bodyType('application/xml', bytes)).text);
        for (const loc of locs) {
          if (index) {
            if (next.depth < MAX_SITEMAP_DEPTH) pending.push({ url: loc, depth: next.depth + 1 });
          } else this.enqueue(loc, 1, first.href);
        }
      } catch {
        // A sitemap that cannot be read is passed over; the crawl goes on.
      }
    }
    this.told(first.href);
  }

  /** Why a URL on another host may not be fetched, if it may not. */
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

  /** Why this URL is out of the crawl's scope, if it is (robots.txt is asked when it is fetched). */
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
    if (c.max_depth !== undefined && depth > c.max_depth) return 'max_depth';
    return undefined;
  }

  /** Record a URL the crawl will not fetch, and tell it. */
  private skip(url: string, depth: number, reason: string, extra: Partial<PageRecord> = {}): void {
    if (this.isRefresh) return;
    this.crawl.pages.set(url, { url, status: 'skipped', reason, depth, ...extra });
    this.crawl.host.emit(this.crawl, 'crawler_url_skipped', { urls: { [url]: reason } });
  }

  private enqueue(raw: string, depth: number, from?: string): void {
    // The same link met again (a sidebar on every page) is decided already: first met, first kept.
    if (/^https?:\/\//i.test(raw)) {
      if (this.rawSeen.has(raw)) return;
      this.rawSeen.add(raw);
    }
    const url = normaliseUrl(raw, from);
    if (!url) return;
    const href = url.href;
    if (this.seen.has(href)) return;
    this.seen.add(href);
    const reason = this.outOfScope(url, depth);
    if (reason) return this.skip(href, depth, reason);
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
    if (!this.stop && this.visited + this.active >= this.pageLimit) this.stop = 'page_limit';
    if (!this.stop && c.max_api_credit && crawl.credits >= c.max_api_credit) this.stop = 'max_api_credit';
    if (!this.stop && crawl.host.now() > this.deadline) this.stop = 'max_duration';
    return this.stop;
  }

  private async worker(): Promise<void> {
    const crawl = this.crawl;
    for (;;) {
      if (crawl.cancelled || this.stopReason()) {
        this.wake(true);
        return;
      }
      const next = this.queue.shift();
      if (next) crawl.fetching(next.url, this.queue.length);
      else crawl.waiting(this.queue.length);
      if (!next) {
        if (this.active === 0) {
          this.wake(true);
          return;
        }
        await new Promise<void>((r) => this.waiters.push(r));
        continue;
      }
      this.active++;
      const gone = await this.visit(next);
      this.active--;
      if (gone) {
        this.wake(true);
        return;
      }
      if (this.active === 0 && this.queue.length === 0) this.wake(true);
      if (this.c.delay) await new Promise((r) => setTimeout(r, this.c.delay));
    }
  }

  /** Whether a redirect to `to` may be followed: the crawl's scope, robots.txt, and a page not met yet. */
  private async follow(to: URL, depth: number): Promise<string | undefined> {
    const target = normaliseUrl(to.href);
    if (!target) return 'bad_redirect';
    const reason = this.outOfScope(target, depth);
    if (reason) return reason;
    if (!(await this.robotsFor(target)).allowed(target)) return 'robots_txt';
    // Already queued or fetched under its own URL: not fetched twice.
    if (this.seen.has(target.href)) return 'redirected';
    return undefined;
  }

  /** Fetch one URL and record it; true when the crawl was cancelled meanwhile. */
  private async visit(next: Queued): Promise<boolean> {
    const crawl = this.crawl;
    const started = Date.now();
    try {
      const url = new URL(next.url);
      if (!(await this.robotsFor(url)).allowed(url)) {
        this.skip(next.url, next.depth, 'robots_txt');
        return false;
      }
      crawl.charge();
      const res = await this.get(next.url, { follow: (to) => this.follow(to, next.depth) });
      const final = normaliseUrl(res.url)?.href ?? res.url;
      this.seen.add(final);
      this.redirected(res.redirects, final, next.depth);
      const record: PageRecord = {
        url: final,
        status: res.ok ? 'visited' : 'failed',
        depth: next.depth,
        http_status: res.status,
        content_type: res.headers['content-type'] ?? '',
        headers: res.headers,
        fetched_at: new Date(crawl.host.now()).toISOString(),
        duration_ms: Date.now() - started,
      };
      if (!res.ok) {
        record.reason = `http_${res.status}`;
        crawl.pages.set(final, record);
        crawl.failed(final, 'ERR::SCRAPE::BAD_UPSTREAM_RESPONSE');
      } else {
        await this.keep(next.depth, record, res);
        // Counted once kept: until then the page is one of the visits under way (`active`).
        this.visited++;
      }
    } catch (error) {
      if (crawl.cancelled) return true;
      this.failure(next, error);
    } finally {
      crawl.fetched(next.url);
    }
    return false;
  }

  /**
   * URLs that redirected on the way to `target`: recorded as `redirected` and never fetched
   * again; `except`, the URL queued, when it is recorded with a reason of its own.
   */
  private redirected(redirects: readonly string[], target: string, depth: number, except?: string): void {
    for (const from of redirects) {
      const href = normaliseUrl(from)?.href ?? from;
      this.seen.add(href);
      if (href !== target && href !== except) this.skip(href, depth, 'redirected', { redirect_to: target });
    }
  }

  /** A URL that could not be fetched: refused redirects are skipped, the rest failed with their reason. */
  private failure(next: Queued, error: unknown): void {
    const crawl = this.crawl;
    if (error instanceof RedirectRefused) {
      // Every hop on the way is a redirect too; the URL queued carries the refusal's reason.
      this.redirected(error.redirects, error.to, next.depth, next.url);
      this.skip(next.url, next.depth, error.reason, { redirect_to: error.to });
      return;
    }
    // A listing line is `url,reason`: the reason is one word, the detail kept beside it.
    const reason = error instanceof FetchFailure ? error.reason : 'network_error';
    crawl.pages.set(next.url, {
      url: next.url,
      status: 'failed',
      reason,
      error: error instanceof Error ? error.message : String(error),
      depth: next.depth,
    });
    crawl.failed(
      next.url,
      reason === 'network_error' ? 'ERR::SCRAPE::NETWORK_ERROR' : 'ERR::SCRAPE::BAD_UPSTREAM_RESPONSE',
    );
  }

  /**
   * An HTML page kept and read (its links, and the formats the crawl keeps, in one parse on a
   * worker thread beside the crawl; converted now, so that reading them back converts nothing). A
   * UTF-8 page's bytes go to the crawl's file and to the worker as they came (decoded there, once);
   * a page in another encoding as its decoded text.
   */
  private async readHtml(
    record: PageRecord,
    body: Buffer,
    type: BodyType,
  ): Promise<{ page: ParsedPage; indexText: string | undefined }> {
    const c = this.c;
    record.encoding = detectEncoding(body, type).encoding;
    const html = record.encoding === 'utf-8' ? withoutBom(body) : decodeAs(body, record.encoding);
    record.html ??= this.crawl.bodies.put(html);
    const missing = missingFormats(record, [
      ...(c.content_formats?.length ? c.content_formats : CONTENT_FORMATS),
      ...(c.search ? ['text'] : []),
    ]);
    const read = await converter.read(html, record.url, missing);
    let indexText: string | undefined;
    if (read.formats) {
      keepEncoded(record, read.formats.bytes, read.formats.lengths);
      record.headings = read.formats.headings;
      // The index reads the page's text as it came, not again from the file.
      if (c.search) indexText = formatOf(read, 'text');
    }
    if (c.extraction_rules) record.extracted = extract(htmlText(html), c.extraction_rules);
    return { page: read.parsed, indexText };
  }

  /**
   * A page fetched well: decoded, read (its links, and the formats the crawl keeps, in one parse
   * on a worker thread beside the crawl), stored, indexed, told, and its links queued.
   */
  private async keep(depth: number, record: PageRecord, res: FetchedPage): Promise<void> {
    const crawl = this.crawl;
    const c = this.c;
    const type = bodyType(res.headers['content-type'], res.body.subarray(0, 512));
    record.kind = type.kind;
    record.content_type = record.content_type || type.mime;
    record.size = res.body.length;
    record.hash = createHash('sha256').update(res.body).digest('hex');
    const previous = crawl.pages.get(record.url);
    record.bodies = crawl.bodies;
    // A page a refresh finds unchanged keeps what the crawl's file holds of it: nothing written again.
    if (previous?.hash === record.hash) {
      if (previous.html) record.html = previous.html;
      if (previous.text) record.text = previous.text;
      if (previous.formats) record.formats = previous.formats;
    }
    let page: ParsedPage | undefined;
    let indexText: string | undefined;
    if (type.kind === 'html') ({ page, indexText } = await this.readHtml(record, res.body, type));
    else if (type.kind === 'text') {
      const { text, encoding } = decodeText(res.body, type);
      record.encoding = encoding;
      record.text ??= crawl.bodies.put(text);
      indexText = text;
    }
    record.title = page?.title ?? '';
    const directives = pageDirectives(
      [...(page?.robots ?? []), ...(res.headers['x-robots-tag'] ? [res.headers['x-robots-tag']] : [])],
      this.product,
    );
    crawl.pages.set(record.url, record);
    if (previous?.hash !== record.hash && this.isRefresh) this.changed.push(record.url);
    const searchable = record.html !== undefined || record.text !== undefined;
    const indexed =
      c.search && searchable && !directives.noindex && (previous?.hash !== record.hash || !this.isRefresh);
    if (indexed) {
      // The index keeps the page's terms; its text is read again from the crawl's file for passages.
      const read = () => contentOf(record, 'text') ?? '';
      crawl.index.put(record.url, record.title, indexText ?? read(), record.headings, read);
    }
    const formats: ContentFormat[] = [...(c.content_formats ?? [])];
    crawl.host.emit(crawl, 'crawler_url_visited', () => ({
      url: record.url,
      scrape: {
        status_code: record.http_status,
        content: Object.fromEntries(formats.map((f) => [f, contentOf(record, f)])),
      },
    }));
    if (page && this.discovery && !(directives.nofollow && !c.ignore_no_follow)) {
      for (const link of page.links) {
        if (link.nofollow && !c.ignore_no_follow) continue;
        this.enqueue(link.href, depth + 1, record.url);
      }
      this.told(record.url);
    }
  }

  /** The run ended: cancelled, a refresh done, or the first run finished. */
  private settle(): void {
    const crawl = this.crawl;
    this.queue.length = 0;
    if (crawl.cancelled) {
      crawl.cancelledNow();
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
    crawl.refreshed(changed);
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
