/**
 * The crawler API of the emulator on the live service's wire (docs/wire.md §4; docs/decisions.md D8 to docs/decisions.md D13): routes,
 * starting crawls in both encodings, status, cancel, refresh and artifacts. Reading a crawl
 * back lives in `listing.ts`, search and prompt in `search-api.ts`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { CRAWL_OPTION_NAMES, crawlConfigSchema, REFRESH_INTERVAL_RANGE } from 'cloud-browser/crawler';
import { toConfigIssues } from 'cloud-browser/internal';
import { isRefusal, type Refusal, readJson, refusal, sendJson } from '../http.js';
import type { KeyedRequest } from '../router.js';
import { har, warc } from './artifacts.js';
import { CRAWL_LIMITS_DEFAULTS, type CrawlLimits, EmulatedCrawl } from './crawl.js';
import { DeliveryQueue, type DeliveryRecord, type EmulatorWebhook } from './deliveries.js';
import { batch, contents, urlListing } from './listing.js';
import { CrawlRun } from './run.js';
import { RefreshScheduler } from './scheduler.js';
import { prompt, search } from './search-api.js';

/** Options of the crawler API. */
export interface CrawlerApiOptions {
  webhooks?: Record<string, EmulatorWebhook> | undefined;
  /** The emulator's clock, ms; `advanceTime` moves it. */
  now?: (() => number) | undefined;
  /** The emulator's own address, for the links its answers hold. */
  apiUrl: () => string;
  /** The emulator's bounds on every crawl. @default CRAWL_LIMITS_DEFAULTS */
  limits?: CrawlLimits | undefined;
}

/** The crawler half of the emulator. */
export class CrawlerApi {
  readonly crawls = new Map<string, EmulatedCrawl>();
  private readonly queue: DeliveryQueue;
  private readonly scheduler: RefreshScheduler;
  private promptErrorAfter: number | undefined;

  constructor(private readonly options: CrawlerApiOptions) {
    this.scheduler = new RefreshScheduler(this.crawls, options.now ?? Date.now);
    this.queue = new DeliveryQueue(options.webhooks, options.apiUrl);
  }

  /** The emulator's clock, ms. */
  get now(): () => number {
    return this.scheduler.now;
  }

  /** Every webhook delivery made so far. */
  get deliveries(): readonly DeliveryRecord[] {
    return this.queue.deliveries;
  }

  /** Move the emulator's clock forward and run the refreshes that became due. */
  advanceTime(ms: number): Promise<void> {
    return this.scheduler.advanceTime(ms);
  }

  /** The next prompt answer sends an `event: error` frame after `tokens` tokens. */
  failNextPromptAfter(tokensBefore: number): void {
    this.promptErrorAfter = tokensBefore;
  }

  /** Wait until every webhook delivery queued so far has been made. */
  settled(): Promise<void> {
    return this.queue.settled();
  }

  async close(): Promise<void> {
    this.scheduler.close();
    for (const c of this.crawls.values()) c.cancel();
    await Promise.all([...this.crawls.values()].map((c) => c.running));
    await this.queue.close();
    for (const c of this.crawls.values()) c.bodies.close();
  }

  /** The paths the crawler serves (mounted on the emulator's router). */
  static readonly PREFIXES = ['/crawl'] as const;

  /** Answer a request under /crawl whose key was checked. */
  async route({ req, res, url, key }: KeyedRequest): Promise<Refusal | undefined> {
    const method = req.method ?? 'GET';
    const parts = url.pathname.split('/').filter(Boolean);
    if (method === 'POST' && parts.length === 1) return this.start(req, res, key);
    if (method === 'POST' && parts.length === 2 && (parts[1] === 'search' || parts[1] === 'prompt')) {
      const body = await readJson(req);
      if (isRefusal(body)) return body;
      if (parts[1] === 'prompt') {
        const failAfter = this.promptErrorAfter;
        this.promptErrorAfter = undefined;
        return prompt(req, res, body, { key, crawls: this.crawls, failAfter });
      }
      const answer = search(body, key, this.crawls, this.options.apiUrl());
      if (isRefusal(answer)) return answer;
      sendJson(res, 200, answer);
      return undefined;
    }
    const crawl = parts[1] ? this.crawls.get(parts[1]) : undefined;
    if (!crawl || crawl.key !== key) return refusal(404, 'ERR::CRAWLER::NOT_FOUND', `no crawl ${parts[1] ?? ''}`);
    const action = `${method} ${parts.slice(2).join('/')}`;
    if (action === 'GET status') {
      sendJson(res, 200, crawl.record());
      return undefined;
    }
    if (action === 'GET urls') return urlListing(res, crawl, url);
    if (action === 'GET contents') return contents(res, crawl, url, this.options.apiUrl());
    if (action === 'POST contents/batch') return batch(req, res, crawl, url);
    if (action === 'GET artifact') return this.artifact(res, crawl, url);
    if (action === 'POST cancel') {
      req.resume();
      crawl.cancel();
      await crawl.running;
      sendJson(res, 200, crawl.record());
      return undefined;
    }
    if (action === 'POST refresh') return this.refreshNow(req, res, crawl);
    if (action === 'PATCH refresh') return this.updateRefresh(req, res, crawl);
    return refusal(404, 'ERR::NOT_FOUND', `no route for ${method} ${url.pathname}`);
  }

  /** The configuration of `POST /crawl` in either encoding (docs/decisions.md D9), or a refusal. */
  private async readConfig(req: IncomingMessage): Promise<Record<string, unknown> | Refusal> {
    const type = (req.headers['content-type'] ?? '').toLowerCase();
    if (!type.startsWith('multipart/form-data')) {
      const body = await readJson(req, 256 << 20);
      if (isRefusal(body)) return refusal(400, 'ERR::CRAWLER::INVALID_CONFIG', 'the body must be a JSON object');
      return body;
    }
    let form: FormData;
    try {
      // The platform's own multipart parser: the emulator needs no other.
      const request = new Request('http://emulator/crawl', {
        method: 'POST',
        headers: req.headers as Record<string, string>,
        body: Readable.toWeb(req) as ReadableStream<Uint8Array>,
        duplex: 'half',
      } as RequestInit);
      form = await request.formData();
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', `the multipart form could not be read: ${why}`);
    }
    const part = form.get('config');
    let raw: unknown;
    try {
      raw = JSON.parse(typeof part === 'string' ? part : ((await (part as Blob | null)?.text()) ?? ''));
    } catch {}
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      return refusal(400, 'ERR::CRAWLER::INVALID_CONFIG', 'the `config` part must be a JSON object');
    if ('url_list' in raw)
      return refusal(400, 'ERR::CRAWLER::INVALID_CONFIG', '`url_list` travels in the `urls` part, not in `config`');
    const urls = form.get('urls');
    if (urls === null) return raw as Record<string, unknown>;
    const text = typeof urls === 'string' ? urls : await urls.text();
    return { ...raw, url_list: text.split(/\r?\n/).filter((l) => l.trim() !== '') };
  }

  private async start(req: IncomingMessage, res: ServerResponse, key: string): Promise<Refusal | undefined> {
    const config = await this.readConfig(req);
    if (isRefusal(config)) return config;
    if ('key' in config)
      return refusal(400, 'ERR::CRAWLER::INVALID_CONFIG', '`key` travels in the query, never in the body');
    const parsed = crawlConfigSchema.safeParse(config);
    if (!parsed.success) {
      const issues = toConfigIssues(parsed.error.issues, CRAWL_OPTION_NAMES);
      return refusal(400, 'ERR::CRAWLER::INVALID_CONFIG', issues.map((i) => i.message).join('; '));
    }
    if (parsed.data.webhook_name && !this.queue.has(parsed.data.webhook_name)) {
      return refusal(
        400,
        'ERR::CRAWLER::WEBHOOK_NOT_FOUND',
        `no webhook named ${JSON.stringify(parsed.data.webhook_name)}`,
        {
          resource: 'WEBHOOK',
        },
      );
    }
    const crawl = new EmulatedCrawl(parsed.data, key, {
      now: this.now,
      limits: this.options.limits ?? CRAWL_LIMITS_DEFAULTS,
      emit: (c, event, data) => this.queue.emit(c, event, data),
      run: (c, isRefresh) => new CrawlRun(c, isRefresh).execute(),
    });
    this.crawls.set(crawl.uuid, crawl);
    // Accepted, not yet running, as the service answers (the status record follows it).
    const accepted = crawl.status;
    crawl.start();
    sendJson(res, 200, { crawler_uuid: crawl.uuid, uuid: crawl.uuid, status: accepted });
    return undefined;
  }

  private artifact(res: ServerResponse, crawl: EmulatedCrawl, url: URL): Refusal | undefined {
    if (!crawl.isComplete)
      return refusal(409, 'ERR::CRAWLER::NOT_COMPLETE', 'artifacts are read once the crawl is complete', {
        is_retryable: true,
        retry_delay: 2,
      });
    const type = url.searchParams.get('type') ?? 'warc';
    if (type === 'har') {
      const text = har(crawl);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
      return undefined;
    }
    if (type !== 'warc') return refusal(400, 'ERR::CRAWLER::INVALID_ARTIFACT', '`type` must be warc or har');
    res.writeHead(200, {
      'content-type': 'application/warc',
      'content-disposition': `attachment; filename="${crawl.uuid}.warc.gz"`,
    });
    Readable.from(warc(crawl)).pipe(res);
    return undefined;
  }

  /** `POST /crawl/{uuid}/refresh`: run a refresh now; answers the refresh block. */
  private refreshNow(req: IncomingMessage, res: ServerResponse, crawl: EmulatedCrawl): Refusal | undefined {
    req.resume();
    if (!crawl.config.refresh)
      return refusal(
        400,
        'ERR::CRAWLER::REFRESH_NOT_ENABLED',
        'this crawl does not refresh: turn it on with PATCH refresh',
      );
    if (!crawl.isComplete || crawl.running)
      return refusal(409, 'ERR::CRAWLER::REFRESH_IN_PROGRESS', 'the crawl is running or refreshing now', {
        is_retryable: true,
        retry_delay: 5,
      });
    void crawl.refresh();
    sendJson(res, 202, { crawler_uuid: crawl.uuid, uuid: crawl.uuid, ...crawl.refreshBlock() });
    return undefined;
  }

  /** `PATCH /crawl/{uuid}/refresh` `{refresh?, refresh_interval?}`: change the schedule. */
  private async updateRefresh(
    req: IncomingMessage,
    res: ServerResponse,
    crawl: EmulatedCrawl,
  ): Promise<Refusal | undefined> {
    const body = await readJson(req);
    if (isRefusal(body)) return body;
    const unknown = Object.keys(body).find((k) => k !== 'refresh' && k !== 'refresh_interval');
    if (unknown !== undefined)
      return refusal(
        400,
        'ERR::CRAWLER::INVALID_REQUEST',
        `unknown field ${JSON.stringify(unknown)}: send refresh, refresh_interval`,
      );
    const { refresh, refresh_interval: interval } = body;
    if (refresh === undefined && interval === undefined)
      return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', 'send `refresh`, `refresh_interval` or both');
    if (refresh !== undefined && typeof refresh !== 'boolean')
      return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', '`refresh` must be true or false');
    if (interval !== undefined) {
      const [min, max] = REFRESH_INTERVAL_RANGE;
      if (typeof interval !== 'number' || !Number.isInteger(interval) || interval < min || interval > max) {
        return refusal(
          400,
          'ERR::CRAWLER::REFRESH_INTERVAL_INVALID',
          `\`refresh_interval\` must be between ${min} and ${max} seconds: each refresh re-scrapes the whole site`,
        );
      }
    }
    const config = crawl.config as { refresh?: boolean; refresh_interval?: number };
    if (refresh !== undefined) config.refresh = refresh;
    if (interval !== undefined) config.refresh_interval = interval;
    sendJson(res, 200, {
      crawler_uuid: crawl.uuid,
      uuid: crawl.uuid,
      ...(crawl.refreshBlock() ?? { enabled: false, interval_seconds: crawl.refreshInterval, status: 'DISABLED' }),
    });
    return undefined;
  }
}
