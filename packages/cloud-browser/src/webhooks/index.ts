/** `cloud-browser/webhooks`: verify, decode and hand over the service's signed deliveries. */

export { isWebhookError, WebhookError } from '../errors.js';
export {
  createNodeWebhookListener,
  createWebhookHandler,
  type Delivery,
  type ReceiverOptions,
  type ServeOptions,
  serveWebhooks,
  type WebhookServer,
} from './adapters.js';
export {
  CRAWLER_EVENTS,
  type CrawlerEvent,
  DEFAULT_HEADER_PREFIX,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_TOLERANCE_SECONDS,
  HEADERS,
  type HeaderNames,
  headerNames,
  LIVE_HEADER_PREFIX,
  RESOURCE_TYPES,
  type ResourceType,
} from './constants.js';
export {
  type CrawlEventBody,
  type CrawlEventCommon,
  type CrawlEventPayloads,
  type CrawlEventSeed,
  parseCrawlEvent,
} from './events.js';
export { type ContentEncoding, type SignedDelivery, type SignOptions, signDelivery } from './sign.js';
export {
  type BodyInput,
  type HeadersInput,
  type PreparedVerifyOptions,
  prepareVerify,
  type VerifiedDelivery,
  type VerifyOptions,
  verifyDelivery,
  verifyPrepared,
} from './verify.js';
