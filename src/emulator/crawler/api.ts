/** The crawler API of the emulator (spec part 4; D8-D13): routes, search, prompt, refresh, webhooks. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import {
  CONTENT_FORMATS,
  type ContentFormat,
  CRAWL_OPTION_NAMES,
  crawlConfigSchema,
  REFRESH_INTERVAL_RANGE,
} from '../../crawler/schema.js';
import { toConfigIssues } from '../../internal/issues.js';
import { errorBody, sendJson } from '../http.js';
import { har, warc } from './artifacts.js';
import { EmulatedCrawl } from './crawl.js';
import { DeliveryQueue, type DeliveryRecord, type EmulatorWebhook } from './deliveries.js';
import { format } from './formats.js';
import { RefreshScheduler } from './scheduler.js';
import { best, type Hit, tokens } from './search.js';

const MAX_SEARCH_CRAWLS = 10;
const PAGE_SIZE = 100;

const send = sendJson;

function error(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
): void {
  sendJson(res, status, errorBody(status, code, message, extra));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > 1 << 20) throw new Error('body too large');
    chunks.push(c);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** Options of the crawler API. */
export interface CrawlerApiOptions {
  apiKeys: ReadonlySet<string>;
  webhooks?: Record<string, EmulatorWebhook> | undefined;
  /** The emulator's clock, ms; `advanceTime` moves it. */
  now?: (() => number) | undefined;
}

/** The crawler half of the emulator. */
export class CrawlerApi {
  readonly crawls = new Map<string, EmulatedCrawl>();
  private readonly queue: DeliveryQueue;
  private readonly scheduler: RefreshScheduler;
  private promptErrorAfter: number | undefined;

  constructor(private readonly options: CrawlerApiOptions) {
    this.scheduler = new RefreshScheduler(this.crawls, options.now ?? Date.now);
    this.queue = new DeliveryQueue(options.webhooks, this.scheduler.now);
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
    await this.settled();
  }

  /** Handle a request under /crawl; false when the path is not the crawler's. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = new URL(req.url ?? '/', 'http://emulator');
    if (url.pathname !== '/crawl' && !url.pathname.startsWith('/crawl/')) return false;
    const key = url.searchParams.get('key');
    if (!key || !this.options.apiKeys.has(key)) {
      send(res, 401, {
        status: 'error',
        http_code: 401,
        reason: 'Unauthorized',
        error_id: 'emulator',
        message: key ? 'the API key is not valid' : 'the API key is missing: pass it as the `key` query parameter',
        code: 'ERR::AUTH::INVALID_KEY',
      });
      req.resume();
      return true;
    }
    void this.route(req, res, url, key).catch((e: unknown) => {
      if (!res.headersSent) error(res, 500, 'ERR::EMULATOR::INTERNAL', e instanceof Error ? e.message : String(e));
      else res.destroy();
    });
    return true;
  }

  private async route(req: IncomingMessage, res: ServerResponse, url: URL, key: string): Promise<void> {
    const method = req.method ?? 'GET';
    const parts = url.pathname.split('/').filter(Boolean);
    if (method === 'POST' && parts.length === 1) return this.start(req, res, key);
    if (method === 'POST' && parts[1] === 'search' && parts.length === 2)
      return this.search(res, await readJson(req), key);
    if (method === 'POST' && parts[1] === 'prompt' && parts.length === 2)
      return this.prompt(req, res, await readJson(req), key);
    const crawl = parts[1] ? this.crawls.get(parts[1]) : undefined;
    if (!crawl || crawl.key !== key) {
      req.resume();
      return error(res, 404, 'ERR::CRAWLER::NOT_FOUND', `no crawl ${parts[1] ?? ''}`);
    }
    const action = `${method} ${parts[2] ?? ''}`;
    if (action === 'GET status') return send(res, 200, crawl.record());
    if (action === 'GET urls') return this.urls(res, crawl, url);
    if (action === 'GET contents') return this.contents(res, crawl, url);
    if (action === 'GET artifact') return this.artifact(res, crawl, url);
    if (action === 'POST cancel') {
      req.resume();
      crawl.cancel();
      await crawl.running;
      return send(res, 200, crawl.record());
    }
    if (action === 'POST refresh') return this.refresh(res, crawl, await readJson(req).catch(() => ({})));
    req.resume();
    error(res, 404, 'ERR::NOT_FOUND', `no route for ${method} ${url.pathname}`);
  }

  private async start(req: IncomingMessage, res: ServerResponse, key: string): Promise<void> {
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
      return error(
        res,
        400,
        'ERR::CRAWLER::INVALID_REQUEST',
        `the body must be a multipart form with a \`config\` part: ${e instanceof Error ? e.message : e}`,
      );
    }
    const configPart = form.get('config');
    let raw: unknown;
    try {
      raw = JSON.parse(
        typeof configPart === 'string' ? configPart : ((await (configPart as Blob | null)?.text()) ?? ''),
      );
    } catch {
      return error(res, 400, 'ERR::CRAWLER::INVALID_CONFIG', 'the `config` part must be a JSON object');
    }
    if (typeof raw !== 'object' || raw === null)
      return error(res, 400, 'ERR::CRAWLER::INVALID_CONFIG', 'the `config` part must be a JSON object');
    if ('url_list' in raw || 'key' in raw) {
      return error(
        res,
        400,
        'ERR::CRAWLER::INVALID_CONFIG',
        '`url_list` travels in the `urls` part and `key` in the query, never in `config`',
      );
    }
    const urlsPart = form.get('urls');
    const config: Record<string, unknown> = { ...(raw as object) };
    if (urlsPart !== null) {
      const text = typeof urlsPart === 'string' ? urlsPart : await urlsPart.text();
      config.url_list = text.split(/\r?\n/).filter((l) => l.trim() !== '');
    }
    const parsed = crawlConfigSchema.safeParse(config);
    if (!parsed.success) {
      const issues = toConfigIssues(parsed.error.issues, CRAWL_OPTION_NAMES);
      return error(res, 400, 'ERR::CRAWLER::INVALID_CONFIG', issues.map((i) => i.message).join('; '));
    }
    if (parsed.data.webhook_name && !this.queue.has(parsed.data.webhook_name)) {
      return error(
        res,
        400,
        'ERR::CRAWLER::WEBHOOK_NOT_FOUND',
        `no webhook named ${JSON.stringify(parsed.data.webhook_name)}`,
        { resource: 'WEBHOOK' },
      );
    }
    const crawl = new EmulatedCrawl(parsed.data, key, {
      now: this.now,
      emit: (c, event, data) => this.queue.emit(c, event, data),
    });
    this.crawls.set(crawl.uuid, crawl);
    crawl.start();
    send(res, 200, { uuid: crawl.uuid, status: crawl.status });
  }

  private page<T>(items: T[], url: URL): { slice: T[]; next: string | null } {
    const at = Number(url.searchParams.get('cursor') ?? '0') || 0;
    const slice = items.slice(at, at + PAGE_SIZE);
    return { slice, next: at + PAGE_SIZE < items.length ? String(at + PAGE_SIZE) : null };
  }

  private urls(res: ServerResponse, crawl: EmulatedCrawl, url: URL): void {
    const wanted = url.searchParams.get('status');
    const all = [...crawl.pages.values()]
      .filter((p) => !wanted || p.status === wanted)
      .map(({ url: u, status, reason, depth, http_status }) => ({
        url: u,
        status,
        depth,
        ...(reason ? { reason } : {}),
        ...(http_status ? { http_status } : {}),
      }));
    const { slice, next } = this.page(all, url);
    send(res, 200, { urls: slice, next_cursor: next });
  }

  private contents(res: ServerResponse, crawl: EmulatedCrawl, url: URL): void {
    const asked = url.searchParams.get('formats')?.split(',').filter(Boolean);
    const formats = (asked ?? crawl.config.content_formats ?? ['html']) as ContentFormat[];
    const bad = formats.filter((f) => !(CONTENT_FORMATS as readonly string[]).includes(f));
    if (bad.length) return error(res, 400, 'ERR::CRAWLER::INVALID_FORMAT', `unknown formats: ${bad.join(', ')}`);
    const only = url.searchParams.get('url');
    const pages = [...crawl.pages.values()].filter((p) => p.status === 'visited' && (!only || p.url === only));
    const { slice, next } = this.page(pages, url);
    send(res, 200, {
      contents: slice.map((p) => ({
        url: p.url,
        title: p.title,
        content: Object.fromEntries(formats.map((f) => [f, format(p.html ?? '', f)])),
        ...(p.extracted ? { extracted: p.extracted } : {}),
      })),
      next_cursor: next,
    });
  }

  private artifact(res: ServerResponse, crawl: EmulatedCrawl, url: URL): void {
    if (!crawl.isComplete)
      return error(res, 409, 'ERR::CRAWLER::NOT_COMPLETE', 'artifacts are read once the crawl is complete');
    const type = url.searchParams.get('type');
    if (type === 'har') {
      const text = har(crawl);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
      return;
    }
    if (type !== 'warc') return error(res, 400, 'ERR::CRAWLER::INVALID_ARTIFACT', '`type` must be warc or har');
    res.writeHead(200, {
      'content-type': 'application/warc',
      'content-disposition': `attachment; filename="${crawl.uuid}.warc.gz"`,
    });
    Readable.from(warc(crawl)).pipe(res);
  }

  private searchable(
    crawls: unknown,
    key: string,
  ): { ok: EmulatedCrawl[]; skipped: { crawl: string; reason: string }[] } | string {
    if (!Array.isArray(crawls) || crawls.length === 0 || crawls.some((c) => typeof c !== 'string'))
      return '`crawls` must list one or more crawl ids';
    const ok: EmulatedCrawl[] = [];
    const skipped: { crawl: string; reason: string }[] = [];
    for (const id of crawls as string[]) {
      const c = this.crawls.get(id);
      if (!c || c.key !== key) skipped.push({ crawl: id, reason: 'NOT_FOUND' });
      else if (!c.config.search) skipped.push({ crawl: id, reason: 'SEARCH_NOT_ENABLED' });
      else if (c.searchState !== 'READY')
        skipped.push({ crawl: id, reason: `SEARCH_${c.searchState === 'FAILED' ? 'FAILED' : 'NOT_READY'}` });
      else ok.push(c);
    }
    return { ok, skipped };
  }

  /** The three search errors where the spec puts them: every crawl asked is unsearchable for one reason, or too many. */
  private searchFailure(
    res: ServerResponse,
    crawls: unknown[],
    skipped: { reason: string }[],
    ok: EmulatedCrawl[],
  ): boolean {
    if (crawls.length > MAX_SEARCH_CRAWLS) {
      error(
        res,
        400,
        'ERR::CRAWLER::SEARCH_TOO_MANY_CRAWLS',
        `at most ${MAX_SEARCH_CRAWLS} crawls per search (got ${crawls.length})`,
      );
      return true;
    }
    if (ok.length > 0) return false;
    if (skipped.every((s) => s.reason === 'SEARCH_NOT_ENABLED')) {
      error(
        res,
        400,
        'ERR::CRAWLER::SEARCH_NOT_ENABLED',
        'none of these crawls builds a search index: start them with `search: true`',
      );
      return true;
    }
    if (skipped.every((s) => s.reason === 'SEARCH_NOT_READY')) {
      error(
        res,
        409,
        'ERR::CRAWLER::SEARCH_NOT_READY',
        'the search index is not READY yet: wait for crawler_search_ready',
        { is_retryable: true, retry_delay: 2 },
      );
      return true;
    }
    return false;
  }

  private search(res: ServerResponse, body: Record<string, unknown>, key: string): void {
    const picked = this.searchable(body.crawls, key);
    if (typeof picked === 'string') return error(res, 400, 'ERR::CRAWLER::INVALID_REQUEST', picked);
    if (typeof body.query !== 'string' || !body.query.trim())
      return error(res, 400, 'ERR::CRAWLER::INVALID_REQUEST', '`query` must be a non-empty string');
    if (this.searchFailure(res, body.crawls as unknown[], picked.skipped, picked.ok)) return;
    const limit = typeof body.limit === 'number' ? body.limit : 10;
    const results = picked.ok
      .flatMap((c) => c.index.search(body.query as string, limit).map((h: Hit) => ({ crawl: c.uuid, ...h })))
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
    send(res, 200, { results, skipped: picked.skipped });
  }

  private async prompt(
    req: IncomingMessage,
    res: ServerResponse,
    body: Record<string, unknown>,
    key: string,
  ): Promise<void> {
    const picked = this.searchable(body.crawls, key);
    if (typeof picked === 'string') return error(res, 400, 'ERR::CRAWLER::INVALID_REQUEST', picked);
    if (typeof body.prompt !== 'string' || !body.prompt.trim())
      return error(res, 400, 'ERR::CRAWLER::INVALID_REQUEST', '`prompt` must be a non-empty string');
    if (this.searchFailure(res, body.crawls as unknown[], picked.skipped, picked.ok)) return;
    // An extractive answer: the best sentence of each of the best pages, with their sources.
    const q = tokens(body.prompt);
    const hits = picked.ok
      .flatMap((c) => c.index.search(body.prompt as string, 3))
      .sort((a, b) => b.score - a.score)
      .slice(0, 3);
    const answer = hits.length
      ? `${hits.map((h) => best(h.snippet, q)).join(' ')} (sources: ${hits.map((h) => h.url).join(', ')})`
      : 'The crawled pages do not answer this.';
    const failAfter = this.promptErrorAfter;
    this.promptErrorAfter = undefined;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    let closed = false;
    req.socket.on('close', () => {
      closed = true;
    });
    const words = answer.match(/\S+\s*/g) ?? [];
    for (let i = 0; i < words.length && !closed; i++) {
      if (failAfter !== undefined && i === failAfter) {
        res.end(
          `event: error\ndata: ${JSON.stringify({ message: 'the answer could not be completed', code: 'ERR::CRAWLER::PROMPT_FAILED', http_status_code: 500, is_retryable: true })}\n\n`,
        );
        return;
      }
      res.write(`event: token\ndata: ${JSON.stringify({ text: words[i] })}\n\n`);
      await new Promise((r) => setTimeout(r, 2));
    }
    res.end(`event: done\ndata: ${JSON.stringify({ sources: hits.map((h) => h.url) })}\n\n`);
  }

  private refresh(res: ServerResponse, crawl: EmulatedCrawl, body: Record<string, unknown>): void {
    if (!crawl.config.refresh)
      return error(res, 400, 'ERR::CRAWLER::REFRESH_NOT_ENABLED', 'this crawl was not started with `refresh: true`');
    if (!crawl.isComplete || crawl.running)
      return error(res, 409, 'ERR::CRAWLER::REFRESH_IN_PROGRESS', 'the crawl is running or refreshing now', {
        is_retryable: true,
        retry_delay: 5,
      });
    const interval = body.refresh_interval;
    if (interval !== undefined) {
      const [min, max] = REFRESH_INTERVAL_RANGE;
      if (typeof interval !== 'number' || !Number.isInteger(interval) || interval < min || interval > max) {
        return error(
          res,
          400,
          'ERR::CRAWLER::REFRESH_INTERVAL_INVALID',
          `\`refresh_interval\` must be between ${min} and ${max} seconds: each refresh re-scrapes the whole site`,
        );
      }
      (crawl.config as { refresh_interval?: number }).refresh_interval = interval;
    }
    void crawl.refresh();
    send(res, 202, { uuid: crawl.uuid, status: crawl.status, refresh_run: crawl.refreshRuns });
  }
}
