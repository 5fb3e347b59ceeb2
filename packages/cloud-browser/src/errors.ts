/**
 * The error model of docs/wire.md §7. Every error we throw is a {@link CloudBrowserError};
 * every message, stack and cause is redacted before it is stored.
 */
import { redact, redactCause } from './internal/redact.js';

const BRAND = Symbol.for('cloud-browser.error-kinds');
/** The prefix of the crawler's error codes. */
const CRAWLER_CODE = 'ERR::CRAWLER::';

type Branded = { readonly [BRAND]?: readonly string[] };

function kindsOf(target: object): string[] {
  const kinds: string[] = [];
  let proto: unknown = Object.getPrototypeOf(target);
  while (proto && proto !== Error.prototype && proto !== Object.prototype) {
    const name = Object.hasOwn(proto, 'name') ? (proto as { name: unknown }).name : undefined;
    if (typeof name === 'string') kinds.push(name);
    proto = Object.getPrototypeOf(proto);
  }
  return kinds;
}

function hasKind(value: unknown, kind: string): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const kinds = (value as Branded)[BRAND];
  return Array.isArray(kinds) && kinds.includes(kind);
}

/** Options every error constructor takes. */
export interface ErrorOptions {
  /** What caused it; stored as a redacted copy. */
  cause?: unknown;
}

/**
 * The base of every error thrown by cloud-browser. Its message, stack and cause never
 * hold a credential: they are redacted when the error is made.
 *
 * @example
 * try { buildBrowserUrl({ timeout: 9999 }) } catch (e) { if (isCloudBrowserError(e)) console.error(e.message) }
 */
export class CloudBrowserError extends Error {
  declare readonly [BRAND]: readonly string[];

  constructor(message: string, options: ErrorOptions = {}) {
    super(redact(message));
    // Configurable: a service error adds the origin its code names (see ServiceError).
    Object.defineProperty(this, BRAND, { value: kindsOf(this), enumerable: false, configurable: true });
    if (options.cause !== undefined) {
      Object.defineProperty(this, 'cause', {
        value: redactCause(options.cause),
        enumerable: false,
        writable: true,
        configurable: true,
      });
    }
    // The stack was captured with the message already redacted; its first line names
    // `Error` because the subclass's name is on the prototype, so rewrite that line.
    if (typeof this.stack === 'string') {
      this.stack = redact(this.stack.replace(/^Error\b/, this.name));
    }
  }
}
Object.defineProperty(CloudBrowserError.prototype, 'name', { value: 'CloudBrowserError', writable: true });

/** One problem found in the options: the option's wire name and what to do. */
export interface ConfigIssue {
  /** The option's wire name (`timeout`, `vault_key`…), or `(options)` for the whole object. */
  option: string;
  /** What is wrong and how to fix it; never holds a secret's value. */
  message: string;
}

/**
 * Options that break a rule of the spec or of docs/decisions.md. Lists every problem at once.
 *
 * @example
 * catch (e) { if (isConfigError(e)) for (const i of e.issues) console.error(i.option, i.message) }
 */
export class ConfigError extends CloudBrowserError {
  readonly issues: readonly ConfigIssue[];

  constructor(subject: string, issues: readonly ConfigIssue[], options: ErrorOptions = {}) {
    const lines = issues.map((i) => `  - ${i.message}`);
    super(
      `Invalid ${subject}: ${issues.length} problem${issues.length === 1 ? '' : 's'}\n${lines.join('\n')}`,
      options,
    );
    this.issues = issues.map((i) => ({ option: i.option, message: redact(i.message) }));
  }
}
Object.defineProperty(ConfigError.prototype, 'name', { value: 'ConfigError', writable: true });

/**
 * An operation that did not finish within its time limit. `uuid` names the crawl when
 * the operation was a wait; the crawl itself is left running.
 *
 * @example
 * throw new TimeoutError('the crawl did not complete within 60000 ms', { uuid })
 */
export class TimeoutError extends CloudBrowserError {
  readonly uuid: string | undefined;
  constructor(message: string, options: ErrorOptions & { uuid?: string } = {}) {
    super(message, options);
    this.uuid = options.uuid;
  }
}
Object.defineProperty(TimeoutError.prototype, 'name', { value: 'TimeoutError', writable: true });

/**
 * The service could not be reached (DNS, refused, reset) or the caller aborted.
 *
 * @example
 * catch (e) { if (isConnectionError(e)) console.error('is the service up?') }
 */
export class ConnectionError extends CloudBrowserError {}
Object.defineProperty(ConnectionError.prototype, 'name', { value: 'ConnectionError', writable: true });

/**
 * The cloud browser's socket closed: the remote browser ended, was killed, timed out or the
 * network dropped. `closeCode` and `reason` are those of the WebSocket close (the reason
 * redacted); `cause` holds the service's error when it sent one before closing.
 *
 * @example
 * session.closed.then((e) => console.error(e.closeCode, e.reason))
 */
export class SessionClosedError extends CloudBrowserError {
  readonly closeCode: number;
  readonly reason: string;
  readonly runId: string | undefined;
  constructor(
    message: string,
    fields: { closeCode: number; reason: string; runId?: string | undefined },
    options: ErrorOptions = {},
  ) {
    super(message, options);
    this.closeCode = fields.closeCode;
    this.reason = redact(fields.reason);
    this.runId = fields.runId;
  }
}
Object.defineProperty(SessionClosedError.prototype, 'name', { value: 'SessionClosedError', writable: true });

/**
 * A webhook delivery refused by the receiver, with the HTTP status to answer (docs/wire.md §4):
 * 400 malformed, 401 unsigned or wrongly signed, 413 too large, 500 the application failed.
 *
 * @example
 * catch (e) { if (isWebhookError(e)) res.writeHead(e.status).end() }
 */
export class WebhookError extends CloudBrowserError {
  readonly status: 400 | 401 | 405 | 413 | 500;
  constructor(status: 400 | 401 | 405 | 413 | 500, message: string, options: ErrorOptions = {}) {
    super(message, options);
    this.status = status;
  }
}
Object.defineProperty(WebhookError.prototype, 'name', { value: 'WebhookError', writable: true });

/** The fields of a service error (docs/wire.md §7), wire names. */
export interface ServiceErrorFields {
  message: string;
  code: string;
  http_status_code: number;
  resource?: string | undefined;
  is_retryable: boolean;
  retry_delay?: number | undefined;
  retry_times?: number | undefined;
  documentation_url?: string | undefined;
  /** `HTTP_BAD_RESPONSE` or `SERVICE_ERROR` when the service names it. */
  kind?: string | undefined;
  /** From the `{status: "error"}` envelope (docs/decisions.md D13). */
  error_id?: string | undefined;
  /** From the `{status: "error"}` envelope (docs/decisions.md D13). */
  reason?: string | undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}
function int(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^\d+$/.test(v.trim())) return Number(v);
  return undefined;
}

/**
 * Seconds from a `Retry-After` header (delta seconds or an HTTP date).
 *
 * @example
 * parseRetryAfter('120') // 120
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** What {@link ServiceError.generate} reads besides the body. */
export interface ServiceErrorInit {
  /** The HTTP status of the answer, used when the body names none. */
  status?: number | undefined;
  /** The answer's headers, for `Retry-After`. */
  headers?: Headers | Record<string, string | string[] | undefined> | undefined;
  cause?: unknown;
}

function header(headers: ServiceErrorInit['headers'], name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const rec = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(rec).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : rec[key];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * An error answered by the service, with the fields of docs/wire.md §7. Build one with
 * {@link ServiceError.generate}, which picks the subclass from the code and status.
 *
 * @example
 * catch (e) { if (isServiceError(e) && e.is_retryable) setTimeout(retry, (e.retry_delay ?? 1) * 1000) }
 */
export class ServiceError extends CloudBrowserError implements ServiceErrorFields {
  readonly code: string;
  readonly http_status_code: number;
  readonly resource: string | undefined;
  readonly is_retryable: boolean;
  readonly retry_delay: number | undefined;
  readonly retry_times: number | undefined;
  readonly documentation_url: string | undefined;
  readonly kind: string | undefined;
  readonly error_id: string | undefined;
  readonly reason: string | undefined;

  constructor(fields: ServiceErrorFields, options: ErrorOptions = {}) {
    const text = redact(fields.message);
    super(text.startsWith(fields.code) ? text : `${fields.code}: ${text}`, options);
    this.code = fields.code;
    this.http_status_code = fields.http_status_code;
    this.resource = fields.resource;
    this.is_retryable = fields.is_retryable;
    this.retry_delay = fields.retry_delay;
    this.retry_times = fields.retry_times;
    this.documentation_url = fields.documentation_url;
    this.kind = fields.kind;
    this.error_id = fields.error_id;
    this.reason = fields.reason === undefined ? undefined : redact(fields.reason);
    // A crawler error is a NotFoundError, a RateLimitError… by its status, and a crawler error
    // by its origin: `isCrawlerError` answers true for every `ERR::CRAWLER::*` code.
    if (this.code.startsWith(CRAWLER_CODE) && !this[BRAND].includes('CrawlerError')) {
      Object.defineProperty(this, BRAND, { value: [...this[BRAND], 'CrawlerError'], enumerable: false });
    }
  }

  /**
   * Read a service error from an answer's body: either the part-7 object or the
   * `{status: "error", http_code, reason, error_id, message, code}` envelope (docs/decisions.md D13), also
   * when nested under `error`. Picks the subclass of the HTTP status (`NotFoundError` for a
   * 404, also from the crawler); a crawler code whose status has no subclass of its own is a
   * `CrawlerError`. Every `ERR::CRAWLER::*` code answers `isCrawlerError`.
   */
  static generate(body: unknown, init: ServiceErrorInit = {}): ServiceError {
    const fields = ServiceError.fields(body, init);
    const Class = ServiceError.classFor(fields);
    return new Class(fields, { cause: init.cause });
  }

  /** The part-7 fields found in `body`, with defaults from `init`. */
  static fields(body: unknown, init: ServiceErrorInit = {}): ServiceErrorFields {
    let raw: Record<string, unknown> = {};
    if (typeof body === 'object' && body !== null) {
      raw = body as Record<string, unknown>;
      const nested = raw.error;
      if (typeof nested === 'object' && nested !== null && !('code' in raw)) raw = { ...raw, ...(nested as object) };
    }
    const status = int(raw.http_status_code) ?? int(raw.http_code) ?? init.status ?? 0;
    const code = str(raw.code) ?? (status ? `HTTP_${status}` : 'UNKNOWN');
    const message =
      str(raw.message) ??
      str(raw.reason) ??
      (typeof body === 'string' && body.trim() ? body.trim().slice(0, 500) : undefined) ??
      (status ? `the service answered HTTP ${status}` : 'the service answered with an error');
    const retryable = raw.is_retryable;
    return {
      message,
      code,
      http_status_code: status,
      resource: str(raw.resource),
      is_retryable: retryable === true || retryable === 'true',
      retry_delay: int(raw.retry_delay) ?? parseRetryAfter(header(init.headers, 'retry-after')),
      retry_times: int(raw.retry_times),
      documentation_url: str(raw.documentation_url),
      kind: str(raw.kind) ?? str(raw.type),
      error_id: str(raw.error_id),
      reason: str(raw.reason),
    };
  }

  private static classFor(fields: ServiceErrorFields): new (f: ServiceErrorFields, o?: ErrorOptions) => ServiceError {
    const s = fields.http_status_code;
    if (s === 400) return BadRequestError;
    if (s === 401) return AuthenticationError;
    if (s === 403) return PermissionDeniedError;
    if (s === 404) return NotFoundError;
    if (s === 409) return ConflictError;
    if (s === 422) return UnprocessableEntityError;
    if (s === 429) return RateLimitError;
    if (s >= 500) return ServerError;
    return fields.code.startsWith(CRAWLER_CODE) ? CrawlerError : ServiceError;
  }
}
Object.defineProperty(ServiceError.prototype, 'name', { value: 'ServiceError', writable: true });

/**
 * HTTP 400: the request was malformed or its options invalid.
 *
 * @example
 * catch (e) { if (e instanceof BadRequestError) console.error(e.code) }
 */
export class BadRequestError extends ServiceError {}
/**
 * HTTP 401: the API key is missing or wrong.
 *
 * @example
 * catch (e) { if (isAuthenticationError(e)) console.error('check CLOUD_API_KEY') }
 */
export class AuthenticationError extends ServiceError {}
/**
 * HTTP 403: the key may not do this (plan, project or environment).
 *
 * @example
 * catch (e) { if (e instanceof PermissionDeniedError) console.error(e.message) }
 */
export class PermissionDeniedError extends ServiceError {}
/**
 * HTTP 404: no such crawl, run or resource.
 *
 * @example
 * catch (e) { if (e instanceof NotFoundError) console.error('no such crawl') }
 */
export class NotFoundError extends ServiceError {}
/**
 * HTTP 409: the resource is in a state that forbids this now.
 *
 * @example
 * catch (e) { if (e instanceof ConflictError) console.error(e.code) }
 */
export class ConflictError extends ServiceError {}
/**
 * HTTP 422: well-formed but unprocessable.
 *
 * @example
 * catch (e) { if (e instanceof UnprocessableEntityError) console.error(e.message) }
 */
export class UnprocessableEntityError extends ServiceError {}
/**
 * HTTP 429: throttled; see `retry_delay`.
 *
 * @example
 * catch (e) { if (isRateLimitError(e)) await sleep((e.retry_delay ?? 1) * 1000) }
 */
export class RateLimitError extends ServiceError {}
/**
 * HTTP 5xx: the service failed.
 *
 * @example
 * catch (e) { if (e instanceof ServerError && e.is_retryable) retry() }
 */
export class ServerError extends ServiceError {}

/**
 * A crawler error (docs/wire.md §7): an `ERR::CRAWLER::*` code whose HTTP status has no class of
 * its own, or a crawl job that ended failed or cancelled, in which case `uuid` names it. A
 * crawler 404 is a {@link NotFoundError}, a 429 a {@link RateLimitError} and so on; for every
 * crawler error, whatever its class, {@link isCrawlerError} is true and `code` starts with
 * `ERR::CRAWLER::`.
 *
 * @example
 * catch (e) { if (isCrawlerError(e) && e.code === 'ERR::CRAWLER::SEARCH_NOT_READY') await crawler.wait(uuid) }
 */
export class CrawlerError extends ServiceError {
  readonly uuid: string | undefined;
  constructor(fields: ServiceErrorFields & { uuid?: string | undefined }, options: ErrorOptions = {}) {
    super(fields, options);
    this.uuid = fields.uuid;
  }
}

for (const [Class, name] of [
  [BadRequestError, 'BadRequestError'],
  [AuthenticationError, 'AuthenticationError'],
  [PermissionDeniedError, 'PermissionDeniedError'],
  [NotFoundError, 'NotFoundError'],
  [ConflictError, 'ConflictError'],
  [UnprocessableEntityError, 'UnprocessableEntityError'],
  [RateLimitError, 'RateLimitError'],
  [ServerError, 'ServerError'],
  [CrawlerError, 'CrawlerError'],
] as const) {
  Object.defineProperty(Class.prototype, 'name', { value: name, writable: true });
}

/**
 * Whether `e` is any error of this library (works across ESM and CJS copies).
 *
 * @example
 * catch (e) { if (isCloudBrowserError(e)) console.error(e.message) }
 */
export function isCloudBrowserError(e: unknown): e is CloudBrowserError {
  return hasKind(e, 'CloudBrowserError');
}
/**
 * Whether `e` is a {@link ConfigError}.
 *
 * @example
 * catch (e) { if (isConfigError(e)) console.error(e.message) }
 */
export function isConfigError(e: unknown): e is ConfigError {
  return hasKind(e, 'ConfigError');
}
/**
 * Whether `e` is a {@link ServiceError} (or one of its subclasses).
 *
 * @example
 * catch (e) { if (isServiceError(e)) console.error(e.message) }
 */
export function isServiceError(e: unknown): e is ServiceError {
  return hasKind(e, 'ServiceError');
}
/**
 * Whether `e` came from the crawler: a {@link CrawlerError}, or a service error of any class
 * (`NotFoundError`, `RateLimitError`…) whose code is an `ERR::CRAWLER::*` code.
 *
 * @example
 * catch (e) { if (isCrawlerError(e)) console.error(e.message) }
 */
export function isCrawlerError(e: unknown): e is CrawlerError {
  return hasKind(e, 'CrawlerError');
}
/**
 * Whether `e` is a {@link BadRequestError}.
 *
 * @example
 * catch (e) { if (isBadRequestError(e)) console.error(e.message) }
 */
export function isBadRequestError(e: unknown): e is BadRequestError {
  return hasKind(e, 'BadRequestError');
}
/**
 * Whether `e` is a {@link NotFoundError}.
 *
 * @example
 * catch (e) { if (isNotFoundError(e)) console.error('no such crawl') }
 */
export function isNotFoundError(e: unknown): e is NotFoundError {
  return hasKind(e, 'NotFoundError');
}
/**
 * Whether `e` is a {@link RateLimitError}.
 *
 * @example
 * catch (e) { if (isRateLimitError(e)) console.error(e.message) }
 */
export function isRateLimitError(e: unknown): e is RateLimitError {
  return hasKind(e, 'RateLimitError');
}
/**
 * Whether `e` is an {@link AuthenticationError}.
 *
 * @example
 * catch (e) { if (isAuthenticationError(e)) console.error(e.message) }
 */
export function isAuthenticationError(e: unknown): e is AuthenticationError {
  return hasKind(e, 'AuthenticationError');
}
/**
 * The service browser answered a command of its own domains with an error (a wrong parameter,
 * a command on the wrong session, a captcha it could not solve).
 *
 * @example
 * catch (e) { if (isProtocolError(e)) console.error(e.method, e.code, e.message) }
 */
export class ProtocolError extends CloudBrowserError {
  readonly method: string;
  /** The CDP error code: -32602 for parameters, -32601 for a method the browser lacks, -32000 for a failure. */
  readonly code: number | undefined;
  constructor(method: string, message: string, options: ErrorOptions & { code?: number | undefined } = {}) {
    super(`${method}: ${message}`, options);
    this.method = method;
    this.code = options.code;
  }
}
Object.defineProperty(ProtocolError.prototype, 'name', { value: 'ProtocolError', writable: true });

/**
 * A captcha the service browser detected and could not solve (`Antibot.captchaError`).
 *
 * @example
 * catch (e) { if (isCaptchaError(e)) console.error(e.captchaType, e.message) }
 */
export class CaptchaError extends CloudBrowserError {
  readonly detectionId: string;
  readonly captchaType: string;
  constructor(fields: { detectionId: string; type: string; errorMessage: string }, options: ErrorOptions = {}) {
    super(fields.errorMessage, options);
    this.detectionId = fields.detectionId;
    this.captchaType = fields.type;
  }
}
Object.defineProperty(CaptchaError.prototype, 'name', { value: 'CaptchaError', writable: true });

/**
 * Whether `e` is a {@link ProtocolError}.
 *
 * @example
 * catch (e) { if (isProtocolError(e)) console.error(e.message) }
 */
export function isProtocolError(e: unknown): e is ProtocolError {
  return hasKind(e, 'ProtocolError');
}
/**
 * Whether `e` is a {@link CaptchaError}.
 *
 * @example
 * catch (e) { if (isCaptchaError(e)) console.error(e.message) }
 */
export function isCaptchaError(e: unknown): e is CaptchaError {
  return hasKind(e, 'CaptchaError');
}
/**
 * Whether `e` is a {@link TimeoutError}.
 *
 * @example
 * catch (e) { if (isTimeoutError(e)) console.error(e.message) }
 */
export function isTimeoutError(e: unknown): e is TimeoutError {
  return hasKind(e, 'TimeoutError');
}
/**
 * Whether `e` is a {@link SessionClosedError}.
 *
 * @example
 * catch (e) { if (isSessionClosedError(e)) console.error(e.message) }
 */
export function isSessionClosedError(e: unknown): e is SessionClosedError {
  return hasKind(e, 'SessionClosedError');
}
/**
 * Whether `e` is a {@link WebhookError}.
 *
 * @example
 * catch (e) { if (isWebhookError(e)) console.error(e.message) }
 */
export function isWebhookError(e: unknown): e is WebhookError {
  return hasKind(e, 'WebhookError');
}
/**
 * Whether `e` is a {@link ConnectionError}.
 *
 * @example
 * catch (e) { if (isConnectionError(e)) console.error(e.message) }
 */
export function isConnectionError(e: unknown): e is ConnectionError {
  return hasKind(e, 'ConnectionError');
}
