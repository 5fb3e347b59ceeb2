/** Names and limits of webhook deliveries (docs/wire.md §2.5, 4, 6; docs/decisions.md D14 to docs/decisions.md D17). Pure: no I/O. */

/** Delivery resource types (docs/wire.md §2.5). */
export const RESOURCE_TYPES = ['scrape', 'ping', 'crawl', 'extraction', 'screenshot', 'alert'] as const;
/** One of {@link RESOURCE_TYPES}. */
export type ResourceType = (typeof RESOURCE_TYPES)[number];

/** The eleven crawler events (docs/wire.md §6). */
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

/** The prefix of the delivery headers in the spec (2.5). @default 'X-Service-Webhook-' */
export const DEFAULT_HEADER_PREFIX = 'X-Service-Webhook-';
/** The prefix under which the live service brands its delivery headers. */
export const LIVE_HEADER_PREFIX = 'X-Scrapfly-Webhook-';

/** The four delivery header names under a prefix, lower case as Node gives them. */
export interface HeaderNames {
  resourceType: string;
  signature: string;
  signatureLowercase: string;
  timestamp: string;
}

/** A header prefix as receivers take it: letters, digits and dashes, ending with a dash. */
export const HEADER_PREFIX = /^[A-Za-z][A-Za-z0-9-]*-$/;

/**
 * The delivery header names under `prefix` (docs/wire.md §2.5 names the `X-Service-Webhook-` ones; the
 * live service sends `X-Scrapfly-Webhook-`).
 *
 * @example
 * headerNames('X-Scrapfly-Webhook-').signature // 'x-scrapfly-webhook-signature'
 */
export function headerNames(prefix: string = DEFAULT_HEADER_PREFIX): HeaderNames {
  const p = prefix.toLowerCase();
  return {
    resourceType: `${p}resource-type`,
    signature: `${p}signature`,
    signatureLowercase: `${p}signature-lowercase`,
    timestamp: `${p}timestamp`,
  };
}

/** Header names of the spec, lower case as Node gives them. */
export const HEADERS: HeaderNames = headerNames();

/** Largest body accepted, on the wire and decoded (docs/wire.md §10). @default 268435456 */
export const DEFAULT_MAX_BODY_BYTES = 268_435_456;
/** How far an alert's timestamp may be from now, seconds (docs/decisions.md D15). @default 300 */
export const DEFAULT_TOLERANCE_SECONDS = 300;
