/**
 * The crawler client (spec parts 4, 5, 7; D8-D13): every crawl operation, with retries,
 * waiting, lazy page iteration, streamed artifacts and prompt streams.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import {
  ConfigError,
  ConnectionError,
  CrawlerError,
  isTimeoutError,
  parseRetryAfter,
  ServiceError,
  TimeoutError,
} from '../errors.js';
import { show } from '../internal/issues.js';
import { redact, registerSecret } from '../internal/redact.js';
import { sleep } from '../internal/sleep.js';
import { ENV, env } from '../session/url.js';
import { encodeCrawlRequest } from './multipart.js';
import { CONTENT_FORMATS, type CrawlConfig } from './schema.js';

/** Crawl states (D11). */
export type CrawlStatusName = 'PENDING' | 'RUNNING' | 'DONE' | 'CANCELLED' | (string & {});

/** The status record of a crawl (D11). Unknown fields are kept. */
export interface CrawlStatus {
  uuid: string;
  status: CrawlStatusName;
  is_complete: boolean;
  /** `null` while running. */
  is_success: boolean | null;
  state: {
    urls_visited: number;
    urls_extracted: number;
    urls_failed: number;
    urls_skipped: number;
    urls_to_crawl: number;
    api_credit_used: number;
    duration: number;
    stop_reason: string | null;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/** One URL a crawl met. */
export interface CrawlUrl {
  url: string;
  status: 'visited' | 'failed' | 'skipped' | (string & {});
  [field: string]: unknown;
}

/** One page's contents, by format. */
export interface CrawlContent {
  url: string;
  content: Partial<Record<'html' | 'markdown' | 'text' | 'clean_html', string>>;
  [field: string]: unknown;
}

/** A search response (spec 2.3): `skipped` lists crawls that were skipped, not an error. */
export interface SearchResponse {
  results: { crawl: string; url: string; score: number; snippet?: string; [field: string]: unknown }[];
  skipped: { crawl: string; reason: string; [field: string]: unknown }[];
  [field: string]: unknown;
}

/** The clock the client waits with; injected by tests. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Options of {@link CrawlerClient}. */
export interface CrawlerClientOptions {
  /** The API key, sent as the `key` query parameter. @default process.env.CLOUD_API_KEY */
  key?: string | undefined;
  /** The service's base URL. @default process.env.CLOUD_API_URL */
  baseUrl?: string | undefined;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch | undefined;
  /** Retries of a retryable failure, unless the service says `retry_times`. @default 3 */
  maxRetries?: number | undefined;
  /**
   * Milliseconds to wait on the service: for an answer, read whole, or, for a stream (an
   * artifact, a prompt answer), for each next chunk. A slow but steady download never times out.
   * @default 60000
   */
  timeout?: number | undefined;
  /** @default the real clock */
  clock?: Clock | undefined;
  /** Jitter of the retry backoff, in [0, 1). @default Math.random */
  random?: (() => number) | undefined;
}

/** Options every method takes. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
}

type RetryPolicy = 'always' | 'when-service-says';

/** What one call asks of {@link CrawlerClient.#request}. */
interface RequestSpec extends CallOptions {
  retry: RetryPolicy;
  query?: Record<string, string | undefined>;
  json?: unknown;
  headers?: Record<string, string>;
  /** Built anew for each attempt (a stream body can be read once). */
  init?: () => RequestInit & { duplex?: 'half' };
  /** A key other than the client's, for this call only. */
  key?: string | undefined;
  /** Hand back the body as a stream timed chunk by chunk, rather than read whole. */
  streaming?: boolean;
}

/** A failed attempt: what to throw, and whether and when to ask again. */
interface Failure {
  error: unknown;
  retryable: boolean;
  /** The service's own retry budget, when it gives one. */
  retryTimes: number | undefined;
  waitMs: number;
}

const realClock: Clock = { now: () => Date.now(), sleep };

const RETRY_STATUSES = new Set([408, 429]);
const URL_STATUSES: readonly string[] = ['visited', 'failed', 'skipped'];

/**
 * A client of the crawler API. The key always travels as the `key` query parameter and
 * never appears in an error or log.
 *
 * @example
 * const crawler = new CrawlerClient();
 * const { uuid } = await crawler.start({ url: 'https://example.com', page_limit: 100, search: true });
 * await crawler.wait(uuid, { onProgress: (s) => console.log(s.state.urls_visited) });
 * for await (const page of crawler.contents(uuid, { formats: ['markdown'] })) console.log(page.url);
 */
export class CrawlerClient {
  readonly baseUrl: string;
  readonly #key: string;
  readonly #fetch: typeof fetch;
  readonly #maxRetries: number;
  readonly #timeout: number;
  readonly #clock: Clock;
  readonly #random: () => number;

  constructor(options: CrawlerClientOptions = {}) {
    const key = options.key ?? env(ENV.apiKey);
    const baseUrl = options.baseUrl ?? env(ENV.apiUrl);
    const issues = [];
    if (!key) issues.push({ option: 'key', message: `\`key\` is required: pass it, or set ${ENV.apiKey}` });
    if (!baseUrl || !URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
      issues.push({
        option: 'baseUrl',
        message: `\`baseUrl\` must be the service's http(s) address: pass it, or set ${ENV.apiUrl}`,
      });
    }
    if (issues.length > 0) throw new ConfigError('crawler client options', issues);
    registerSecret(key);
    this.#key = key as string;
    this.baseUrl = (baseUrl as string).replace(/\/+$/, '');
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#maxRetries = options.maxRetries ?? 3;
    this.#timeout = options.timeout ?? 60_000;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
  }

  /** Printing the client never shows the key. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `CrawlerClient { baseUrl: '${this.baseUrl}' }`;
  }

  /** Start a crawl (`POST /crawl`, multipart). Retried only when the service says it may be. */
  async start(config: CrawlConfig, options: CallOptions = {}): Promise<{ uuid: string; [field: string]: unknown }> {
    const encoded = encodeCrawlRequest(config);
    const key = typeof config.key === 'string' ? config.key : undefined;
    registerSecret(key);
    const res = await this.#request('POST', '/crawl', {
      ...options,
      retry: 'when-service-says',
      key,
      init: () => ({
        body: encoded.body(),
        duplex: 'half',
        headers: { 'content-type': encoded.contentType, 'content-length': String(encoded.contentLength) },
      }),
    });
    const body = (await res.json()) as { uuid?: unknown; crawler_uuid?: unknown };
    const uuid = typeof body.uuid === 'string' ? body.uuid : body.crawler_uuid;
    if (typeof uuid !== 'string' || uuid === '') {
      throw ServiceError.generate(
        { code: 'ERR::CRAWLER::BAD_RESPONSE', message: 'the crawl start answer has no uuid' },
        { status: res.status },
      );
    }
    return { ...body, uuid };
  }

  /** The crawl's status record (D11), unknown fields kept. */
  async status(uuid: string, options: CallOptions = {}): Promise<CrawlStatus> {
    const res = await this.#request('GET', `/crawl/${this.#id(uuid)}/status`, { ...options, retry: 'always' });
    return (await res.json()) as CrawlStatus;
  }

  /**
   * Poll until the crawl completes. A crawl that ends failed or cancelled throws a
   * {@link CrawlerError} naming it; a `timeout` throws a {@link TimeoutError} and leaves the crawl running.
   */
  async wait(
    uuid: string,
    options: CallOptions & { pollInterval?: number; timeout?: number; onProgress?: (status: CrawlStatus) => void } = {},
  ): Promise<CrawlStatus> {
    const started = this.#clock.now();
    const interval = options.pollInterval ?? 2000;
    for (;;) {
      const status = await this.status(uuid, options);
      options.onProgress?.(status);
      if (status.is_complete) {
        if (status.status === 'CANCELLED' || status.is_success === false) {
          const reason = status.state?.stop_reason ?? status.status;
          throw new CrawlerError({
            message: `the crawl ${uuid} ended ${status.status === 'CANCELLED' ? 'cancelled' : 'unsuccessfully'} (${reason})`,
            code: status.status === 'CANCELLED' ? 'ERR::CRAWLER::CANCELLED' : 'ERR::CRAWLER::FAILED',
            http_status_code: 200,
            is_retryable: false,
            resource: 'CRAWLER',
            uuid,
          });
        }
        return status;
      }
      // The last poll is at the deadline itself, so a crawl that completes just in time counts.
      const left = options.timeout === undefined ? interval : options.timeout - (this.#clock.now() - started);
      if (left <= 0) {
        throw new TimeoutError(`the crawl ${uuid} did not complete within ${options.timeout} ms; it is still running`, {
          uuid,
        });
      }
      await this.#clock.sleep(Math.min(interval, left), options.signal);
    }
  }

  /** Every URL the crawl met, fetched a page at a time as you iterate. */
  urls(
    uuid: string,
    options: CallOptions & { status?: 'visited' | 'failed' | 'skipped' } = {},
  ): AsyncIterable<CrawlUrl> {
    if (options.status !== undefined && !URL_STATUSES.includes(options.status)) {
      throw new ConfigError('urls options', [
        { option: 'status', message: `\`status\` must be ${URL_STATUSES.join(', ')} (got ${show(options.status)})` },
      ]);
    }
    return this.#pages<CrawlUrl>(`/crawl/${this.#id(uuid)}/urls`, 'urls', { status: options.status }, options);
  }

  /** Every page's contents in the given formats, fetched a page at a time as you iterate. */
  contents(
    uuid: string,
    options: CallOptions & { formats?: readonly ('html' | 'markdown' | 'text' | 'clean_html')[]; url?: string } = {},
  ): AsyncIterable<CrawlContent> {
    const formats: readonly unknown[] | undefined = options.formats;
    const wrong = Array.isArray(formats) ? formats.filter((f) => !CONTENT_FORMATS.includes(f as never)) : [formats];
    if (formats !== undefined && wrong.length > 0) {
      throw new ConfigError('contents options', [
        {
          option: 'formats',
          message: Array.isArray(formats)
            ? `\`formats\` entries must be ${CONTENT_FORMATS.join(', ')} (got ${show(wrong[0])})`
            : `\`formats\` must be a list of ${CONTENT_FORMATS.join(', ')} (got ${show(formats)})`,
        },
      ]);
    }
    return this.#pages<CrawlContent>(
      `/crawl/${this.#id(uuid)}/contents`,
      'contents',
      { formats: options.formats?.join(','), url: options.url },
      options,
    );
  }

  /** The crawl's artifact as a stream (`warc`, gzip WARC records; `har`, JSON): never a whole buffer. */
  async artifact(
    uuid: string,
    options: CallOptions & { type: 'warc' | 'har' },
  ): Promise<{ stream: ReadableStream<Uint8Array>; contentType: string | null; contentLength: number | null }> {
    if (options.type !== 'warc' && options.type !== 'har') {
      throw new ConfigError('artifact options', [{ option: 'type', message: '`type` must be warc or har' }]);
    }
    const res = await this.#request('GET', `/crawl/${this.#id(uuid)}/artifact`, {
      ...options,
      retry: 'always',
      query: { type: options.type },
      streaming: true,
    });
    const length = res.headers.get('content-length');
    return {
      stream: res.body ?? new ReadableStream({ start: (c) => c.close() }),
      contentType: res.headers.get('content-type'),
      contentLength: length === null ? null : Number(length),
    };
  }

  /**
   * Search the index of one or more crawls. Crawls without an index, or not ready yet, are
   * listed in `skipped`; the search still answers.
   */
  async search(
    params: { crawls: readonly string[]; query: string; [field: string]: unknown },
    options: CallOptions = {},
  ): Promise<SearchResponse> {
    this.#checkCrawls(params.crawls, 'query', params.query);
    const res = await this.#request('POST', '/crawl/search', { ...options, retry: 'always', json: params });
    const body = (await res.json()) as SearchResponse;
    return { ...body, results: body.results ?? [], skipped: body.skipped ?? [] };
  }

  /**
   * Ask the crawls' index; the answer streams as tokens. An error before the first token
   * rejects; an error frame after tokens ends the iteration by throwing, after the tokens
   * already given. Leaving the loop early aborts the request.
   */
  prompt(
    params: { crawls: readonly string[]; prompt: string; [field: string]: unknown },
    options: CallOptions = {},
  ): PromptStream {
    this.#checkCrawls(params.crawls, 'prompt', params.prompt);
    return new PromptStream(
      (signal) =>
        this.#request('POST', '/crawl/prompt', {
          signal,
          retry: 'always',
          json: params,
          headers: { accept: 'text/event-stream' },
          streaming: true,
        }),
      options.signal,
    );
  }

  /** Refresh a crawl now (`REFRESH_*` errors are {@link CrawlerError}s). Retried only when the service says. */
  async refresh(uuid: string, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const res = await this.#request('POST', `/crawl/${this.#id(uuid)}/refresh`, {
      ...options,
      retry: 'when-service-says',
    });
    return (await res.json().catch(() => ({}))) as Record<string, unknown>;
  }

  /** Cancel a running crawl. */
  async cancel(uuid: string, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const res = await this.#request('POST', `/crawl/${this.#id(uuid)}/cancel`, { ...options, retry: 'always' });
    return (await res.json().catch(() => ({}))) as Record<string, unknown>;
  }

  #id(uuid: string): string {
    if (typeof uuid !== 'string' || !/^[A-Za-z0-9._~-]{1,200}$/.test(uuid)) {
      throw new ConfigError('crawl id', [{ option: 'uuid', message: '`uuid` must be the id `start` returned' }]);
    }
    return uuid;
  }

  #checkCrawls(crawls: readonly string[], name: string, text: unknown) {
    const issues = [];
    if (!Array.isArray(crawls) || crawls.length === 0 || crawls.some((c) => typeof c !== 'string' || c === '')) {
      issues.push({ option: 'crawls', message: '`crawls` must list one or more crawl ids' });
    }
    if (typeof text !== 'string' || text.trim() === '')
      issues.push({ option: name, message: `\`${name}\` must be a non-empty string` });
    if (issues.length > 0) throw new ConfigError(`${name} parameters`, issues);
  }

  async *#pages<T>(
    path: string,
    field: string,
    query: Record<string, string | undefined>,
    options: CallOptions,
  ): AsyncGenerator<T> {
    let cursor: string | undefined;
    do {
      const res = await this.#request('GET', path, { ...options, retry: 'always', query: { ...query, cursor } });
      const type = res.headers.get('content-type') ?? '';
      if (type.startsWith('text/plain')) {
        // A plain list, one URL per line: no pages.
        for (const line of (await res.text()).split('\n'))
          if (line.trim()) yield { url: line.trim(), status: 'visited' } as T;
        return;
      }
      const body = (await res.json()) as Record<string, unknown>;
      for (const item of (body[field] as T[] | undefined) ?? []) yield item;
      const next = body.next_cursor ?? body.cursor;
      if (next === cursor && cursor !== undefined) {
        // Asking again would give the same page forever.
        throw ServiceError.generate(
          { code: 'ERR::CRAWLER::BAD_RESPONSE', message: `the service gave the page cursor ${show(next)} twice` },
          { status: res.status },
        );
      }
      cursor = typeof next === 'string' && next !== '' ? next : undefined;
    } while (cursor);
  }

  async #request(method: string, path: string, spec: RequestSpec): Promise<Response> {
    const url = this.#url(path, spec);
    let limit = this.#maxRetries;
    for (let attempt = 0; ; attempt++) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      const call = new Call(method, path, this.#timeout, spec.signal);
      let outcome: Failure;
      try {
        const res = await this.#fetch(url, this.#init(method, spec, call.signal));
        if (res.ok) return spec.streaming ? call.stream(res) : await call.read(res);
        outcome = await this.#refusal(res, spec.retry);
      } catch (error) {
        if (spec.signal?.aborted) throw spec.signal.reason;
        outcome = this.#networkFailure(method, path, error, call, spec.retry);
      } finally {
        call.settle();
      }
      limit = outcome.retryTimes ?? limit;
      if (!outcome.retryable || attempt >= limit) throw outcome.error;
      await this.#clock.sleep(this.#backoff(attempt, outcome.waitMs), spec.signal);
    }
  }

  /** The request's address: the path, its query, and the key. */
  #url(path: string, spec: RequestSpec): URL {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [k, v] of Object.entries(spec.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    url.searchParams.set('key', spec.key ?? this.#key);
    return url;
  }

  /** One attempt's `fetch` options: a fresh body each time. */
  #init(method: string, spec: RequestSpec, signal: AbortSignal): RequestInit {
    const init = spec.init?.() ?? {};
    return {
      method,
      ...init,
      ...(spec.json === undefined ? {} : { body: JSON.stringify(spec.json) }),
      headers: {
        accept: 'application/json',
        ...(spec.json === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.headers as Record<string, string> | undefined),
        ...spec.headers,
      },
      signal,
    } as RequestInit;
  }

  /** A non-2xx answer: its error, and whether and when to ask again (D13). */
  async #refusal(res: Response, policy: RetryPolicy): Promise<Failure> {
    const text = await res.text().catch(() => '');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    const error = ServiceError.generate(body, { status: res.status, headers: res.headers });
    const retryable =
      policy === 'always'
        ? error.is_retryable || RETRY_STATUSES.has(res.status) || res.status >= 500
        : error.is_retryable;
    const after = parseRetryAfter(res.headers.get('retry-after'), this.#clock.now()) ?? 0;
    return { error, retryable, retryTimes: error.retry_times, waitMs: Math.max(error.retry_delay ?? 0, after) * 1000 };
  }

  /** No answer: a timeout, or a network failure (never with the key in its message). */
  #networkFailure(method: string, path: string, error: unknown, call: Call, policy: RetryPolicy): Failure {
    const failure = call.timedOut
      ? call.signal.reason
      : new ConnectionError(
          `${method} ${path} failed: ${redact(error instanceof Error ? error.message : String(error))}`,
          {
            cause: error,
          },
        );
    return { error: failure, retryable: policy === 'always', retryTimes: undefined, waitMs: 0 };
  }

  /** Exponential backoff with jitter, at least what the service asked for. */
  #backoff(attempt: number, atLeastMs: number): number {
    const backoff = Math.min(30_000, 500 * 2 ** attempt);
    return Math.max(backoff / 2 + this.#random() * (backoff / 2), atLeastMs);
  }
}

/**
 * One attempt of a request: its own abort controller, which the caller's signal and a timer
 * abort. The timer runs while the client waits on the service: until an answer has arrived
 * and been read whole, or, for a stream, while a read of the next chunk is pending, so a long
 * artifact download or answer only fails when the service goes quiet for `timeout` ms.
 */
class Call {
  readonly #controller = new AbortController();
  readonly signal = this.#controller.signal;
  timedOut = false;
  #timer: NodeJS.Timeout | undefined;
  #streaming = false;
  readonly #onAbort = () => this.#controller.abort(this.caller?.reason);

  constructor(
    private readonly method: string,
    private readonly path: string,
    private readonly ms: number,
    private readonly caller: AbortSignal | undefined,
  ) {
    caller?.addEventListener('abort', this.#onAbort, { once: true });
    this.#arm('did not answer');
  }

  #arm(what: string) {
    this.#timer = setTimeout(() => {
      this.timedOut = true;
      this.#controller.abort(new TimeoutError(`${this.method} ${this.path} ${what} within ${this.ms} ms`));
    }, this.ms);
  }

  #disarm() {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The whole body, read while the timer runs, as a response of its own. */
  async read(res: Response): Promise<Response> {
    const bytes = await res.arrayBuffer();
    const empty = res.status === 204 || res.status === 205 || res.status === 304;
    return new Response(empty ? null : bytes, { status: res.status, statusText: res.statusText, headers: res.headers });
  }

  /** The body as a stream whose reads are timed one by one; the attempt ends with the stream. */
  stream(res: Response): Response {
    this.#streaming = true;
    this.#disarm();
    const reader = (res.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() })).getReader();
    const end = () => {
      this.#disarm();
      this.caller?.removeEventListener('abort', this.#onAbort);
    };
    const body = new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          this.#arm('sent nothing');
          let chunk: ReadableStreamReadResult<Uint8Array>;
          try {
            chunk = await reader.read();
          } catch (error) {
            end();
            throw error;
          }
          this.#disarm();
          if (chunk.done) {
            end();
            controller.close();
          } else controller.enqueue(chunk.value);
        },
        cancel: (reason) => {
          end();
          this.#controller.abort(reason);
          return reader.cancel(reason).catch(() => {});
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  }

  /** The attempt is over, unless its body streams on. */
  settle() {
    if (this.#streaming) return;
    this.#disarm();
    this.caller?.removeEventListener('abort', this.#onAbort);
  }
}

/**
 * A prompt answer: iterate its tokens, or await `text()` for the whole answer.
 *
 * @example
 * for await (const token of crawler.prompt({ crawls: [uuid], prompt: 'What does it cost?' })) process.stdout.write(token)
 */
export class PromptStream implements AsyncIterable<string> {
  #used = false;
  constructor(
    private readonly open: (signal: AbortSignal) => Promise<Response>,
    private readonly signal: AbortSignal | undefined,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<string> {
    if (this.#used)
      throw new ConfigError('prompt stream', [{ option: 'prompt', message: 'a prompt stream can be read once' }]);
    this.#used = true;
    const controller = new AbortController();
    const onAbort = () => controller.abort(this.signal?.reason);
    if (this.signal?.aborted) onAbort();
    this.signal?.addEventListener('abort', onAbort, { once: true });
    const queue: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (e) => queue.push(e) });
    try {
      const res = await this.open(controller.signal);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (this.signal?.aborted) throw this.signal.reason;
          if (isTimeoutError(error)) throw error;
          throw new ConnectionError(
            `the prompt stream broke: ${redact(error instanceof Error ? error.message : String(error))}`,
            { cause: error },
          );
        }
        if (chunk.done) {
          // The parser holds a final lone CR in case an LF follows; at the end of the stream
          // nothing will, so end the line (an extra blank line dispatches nothing).
          parser.feed(`${decoder.decode()}\n`);
          parser.reset({ consume: true });
        } else {
          parser.feed(decoder.decode(chunk.value, { stream: true }));
        }
        while (queue.length > 0) {
          const event = queue.shift() as EventSourceMessage;
          if (event.event === 'error') {
            let fields: unknown = event.data;
            try {
              fields = JSON.parse(event.data);
            } catch {}
            throw ServiceError.generate(fields, { status: 500 });
          }
          if (event.event === 'done') return;
          if (event.event === 'token' || event.event === undefined) {
            let text = event.data;
            try {
              const parsed = JSON.parse(event.data) as { text?: unknown };
              if (typeof parsed.text === 'string') text = parsed.text;
            } catch {}
            yield text;
          }
        }
        if (chunk.done) {
          throw new ConnectionError('the prompt stream ended before its `done` event');
        }
      }
    } finally {
      this.signal?.removeEventListener('abort', onAbort);
      controller.abort();
    }
  }

  /** The whole answer. */
  async text(): Promise<string> {
    let out = '';
    for await (const token of this) out += token;
    return out;
  }
}
