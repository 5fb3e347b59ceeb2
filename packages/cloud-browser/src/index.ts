/**
 * cloud-browser: the session-options builder, VNC credentials, errors and redaction.
 * Connectors, the crawler client, webhooks and the emulator live in their own entries.
 */
export {
  AuthenticationError,
  BadRequestError,
  CloudBrowserError,
  ConfigError,
  type ConfigIssue,
  ConflictError,
  ConnectionError,
  CrawlerError,
  type ErrorOptions,
  isAuthenticationError,
  isBadRequestError,
  isCloudBrowserError,
  isConfigError,
  isConnectionError,
  isCrawlerError,
  isNotFoundError,
  isRateLimitError,
  isServiceError,
  isSessionClosedError,
  isTimeoutError,
  isWebhookError,
  NotFoundError,
  PermissionDeniedError,
  parseRetryAfter,
  RateLimitError,
  ServerError,
  ServiceError,
  type ServiceErrorFields,
  type ServiceErrorInit,
  SessionClosedError,
  TimeoutError,
  UnprocessableEntityError,
  WebhookError,
} from './errors.js';
export type { Logger } from './internal/log.js';
export { REDACTED, redact, redactUrl } from './internal/redact.js';
export type { SafeParseResult, Schema, SchemaIssue } from './internal/schema.js';
export { projectSalt } from './session/salt.js';
export {
  type BrowserSessionOptions,
  BYOP_PROTOCOLS,
  browserSessionSchema,
  MAX_LANGUAGES,
  MAX_TIMEOUT_SECONDS,
  OPERATING_SYSTEMS,
  type OperatingSystem,
  type ParsedBrowserSession,
  PROXY_POOLS,
  type ProxyPool,
  SECRET_OPTIONS,
  SESSION_OPTION_NAMES,
  type SessionOptionValues,
} from './session/schema.js';
export {
  type BrowserUrlOptions,
  browserUrlOf,
  buildBrowserUrl,
  ENV,
  type ExtraValue,
  type JoinTarget,
  type ParsedBrowserUrl,
  parseBrowserUrl,
} from './session/url.js';
export {
  VNC_TCP_PORT,
  type VncCredentials,
  type VncCredentialsInput,
  type VncEndpoint,
  vncCredentials,
} from './session/vnc.js';
