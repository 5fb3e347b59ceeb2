/** Names and limits of webhook deliveries (spec 2.5, 4, 6; D14-D17). Pure: no I/O. */

/** Delivery resource types (spec 2.5). */
export const RESOURCE_TYPES = ['scrape', 'ping', 'crawl', 'extraction', 'screenshot', 'alert'] as const;
/** One of {@link RESOURCE_TYPES}. */
export type ResourceType = (typeof RESOURCE_TYPES)[number];

/** The eleven crawler events (spec part 6). */
export const CRAWLER_EVENTS = [
  'crawler_started',
  'crawler_url_visited',
  'crawler_url_skipped',
  'crawler_url_discovered',
  'crawler_url_failed',
  'crawler_stopped',
  'crawler_cancelled',
  'crawler_finished',
  'crawler_search_ready',
  'crawler_search_failed',
  'crawler_updated',
] as const;
/** One of {@link CRAWLER_EVENTS}. */
export type CrawlerEvent = (typeof CRAWLER_EVENTS)[number];

/** Header names, lower case as Node gives them. */
export const HEADERS = {
  resourceType: 'x-service-webhook-resource-type',
  signature: 'x-service-webhook-signature',
  signatureLowercase: 'x-service-webhook-signature-lowercase',
  timestamp: 'x-service-webhook-timestamp',
} as const;

/** Largest body accepted, on the wire and decoded (spec part 8). @default 268435456 */
export const DEFAULT_MAX_BODY_BYTES = 268_435_456;
/** How far an alert's timestamp may be from now, seconds (D15). @default 300 */
export const DEFAULT_TOLERANCE_SECONDS = 300;
