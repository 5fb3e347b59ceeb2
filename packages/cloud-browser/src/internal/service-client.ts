/**
 * The HTTP side every REST client of the service shares (docs/decisions.md D13): the key as a query parameter,
 * retries with backoff and jitter, `retry_delay` and `Retry-After`, a timer on each wait, and
 * errors read from the part-7 fields or the envelope. Never echoes the key.
 */
import { type ConfigIssue, ConnectionError, parseRetryAfter, ServiceError } from '../errors.js';
import { Call } from './call.js';
import { numberIssues } from './knobs.js';
import { type Log, type LogChannel, type Logger, logFor, loggerIssues } from './log.js';
import { redact, registerSecret } from './redact.js';
import { sleep } from './sleep.js';

/** The clock a client waits with; injected by tests. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Options every call takes. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
}

/** `always` for reads and idempotent writes; `when-service-says` for billable or creating calls. */
export type RetryPolicy = 'always' | 'when-service-says';

/** What one call asks of {@link ServiceClient.request}. */
export interface RequestSpec extends CallOptions {
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

/** What a {@link ServiceClient} is built with, checked by its owner. */
export interface ServiceClientOptions {
  key: string;
  /** The service's base URL, without a trailing slash. */
  baseUrl: string;
  /** The query parameter the key travels in. @default 'key' */
  keyParam?: string | undefined;
  fetch?: typeof fetch | undefined;
  maxRetries: number;
  timeout: number;
  clock?: Clock | undefined;
  random?: (() => number) | undefined;
  /** Where each call, refusal and retry is told. */
  log?: Log | undefined;
}

const realClock: Clock = { now: () => Date.now(), sleep };

/**
 * The problems of what every REST client takes: the key (from the option or `envName`) and
 * the retry and timeout knobs.
 */
export function clientIssues(
  options: { maxRetries?: unknown; timeout?: unknown; logger?: unknown },
  key: string | undefined,
  envName: string,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  issues.push(...loggerIssues(options.logger));
  if (!key) issues.push({ option: 'key', message: `\`key\` is required: pass it, or set ${envName}` });
  issues.push(
    ...numberIssues({
      maxRetries: [options.maxRetries, { min: 0, max: 10, unit: 'retries' }],
      timeout: [options.timeout, { min: 1, max: 2_147_483_647, unit: 'milliseconds' }],
    }),
  );
  return issues;
}
const RETRY_STATUSES = new Set([408, 429]);

/** The options every REST client takes besides its key and address (checked by {@link clientIssues}). */
export interface ClientKnobs {
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch | undefined;
  /** Retries of a retryable failure, 0 to 10, unless the service says `retry_times`. @default 3 */
  maxRetries?: number | undefined;
  /**
   * Milliseconds to wait on the service: for an answer, read whole, or, for a stream (an
   * artifact, a recording, a prompt answer), for each next chunk. A slow but steady download
   * never times out. @default 60000
   */
  timeout?: number | undefined;
  /** @default the real clock */
  clock?: Clock | undefined;
  /** Jitter of the retry backoff, in [0, 1). @default Math.random */
  random?: (() => number) | undefined;
  /**
   * Where to tell each call, refusal and retry (`console`, pino...), secrets redacted;
   * `DEBUG=cloud-browser:api` (CloudBrowserApi) or `cloud-browser:crawler` (CrawlerClient)
   * prints the same to standard error.
   */
  logger?: Logger | undefined;
}

/** A {@link ServiceClient} from a client's checked options and its defaults. */
export function serviceClientFor(
  options: ClientKnobs,
  key: string,
  baseUrl: string,
  defaults: { maxRetries: number; timeout: number },
  channel: LogChannel,
): ServiceClient {
  return new ServiceClient({
    key,
    baseUrl,
    fetch: options.fetch,
    maxRetries: options.maxRetries ?? defaults.maxRetries,
    timeout: options.timeout ?? defaults.timeout,
    clock: options.clock,
    random: options.random,
    log: logFor(channel, options.logger),
  });
}

/** The request machinery of the service's REST clients. */
export class ServiceClient {
  readonly baseUrl: string;
  readonly clock: Clock;
  readonly #key: string;
  readonly #keyParam: string;
  readonly #fetch: typeof fetch;
  readonly #maxRetries: number;
  readonly #timeout: number;
  readonly #random: () => number;
  readonly #log: Log;

  constructor(options: ServiceClientOptions) {
    registerSecret(options.key);
    this.#key = options.key;
    this.#keyParam = options.keyParam ?? 'key';
    this.baseUrl = options.baseUrl;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#maxRetries = options.maxRetries;
    this.#timeout = options.timeout;
    this.clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#log = options.log ?? (() => {});
  }

  /** Printing the client never shows the key. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `ServiceClient { baseUrl: '${this.baseUrl}' }`;
  }

  /**
   * One call: the key in the query, the body built anew for each attempt, retried as docs/decisions.md D13 says
   * for the call's policy, each attempt timed while waiting on the service.
   */
  async request(method: string, path: string, spec: RequestSpec): Promise<Response> {
    const url = this.#url(path, spec);
    let limit = this.#maxRetries;
    for (let attempt = 0; ; attempt++) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      const call = new Call(method, path, this.#timeout, spec.signal);
      const started = this.clock.now();
      let outcome: Failure;
      try {
        const res = await this.#fetch(url, this.#init(method, spec, call.signal));
        this.#log('debug', `${method} ${path} ${res.status} in ${this.clock.now() - started} ms`);
        if (res.ok) return spec.streaming ? call.stream(res) : await call.read(res);
        outcome = await this.#refusal(res, spec.retry);
      } catch (error) {
        if (spec.signal?.aborted) throw spec.signal.reason;
        outcome = this.#networkFailure(method, path, error, call, spec.retry);
      } finally {
        call.settle();
      }
      limit = outcome.retryTimes ?? limit;
      const why = outcome.error instanceof Error ? outcome.error.message.split('\n')[0] : String(outcome.error);
      if (!outcome.retryable || attempt >= limit) {
        this.#log('warn', `${method} ${path} refused: ${why}`);
        throw outcome.error;
      }
      const wait = this.#backoff(attempt, outcome.waitMs);
      this.#log(
        'warn',
        `${method} ${path} refused: ${why}; retrying in ${Math.round(wait)} ms (${attempt + 1} of ${limit})`,
      );
      await this.clock.sleep(wait, spec.signal);
    }
  }

  /** The request's address: the path, its query, and the key. */
  #url(path: string, spec: RequestSpec): URL {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [k, v] of Object.entries(spec.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    url.searchParams.set(this.#keyParam, spec.key ?? this.#key);
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

  /** A non-2xx answer: its error, and whether and when to ask again (docs/decisions.md D13). */
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
    const after = parseRetryAfter(res.headers.get('retry-after'), this.clock.now()) ?? 0;
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
