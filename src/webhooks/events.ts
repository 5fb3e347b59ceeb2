/** Reading a crawl delivery's JSON body (D17). Pure. */
import { WebhookError } from '../errors.js';
import { CRAWLER_EVENTS, type CrawlerEvent } from './constants.js';

/** A crawl delivery: its `event` name and the rest of its JSON. */
export type CrawlEventPayload = { event: CrawlerEvent } & Record<string, unknown>;

/**
 * Parse a crawl delivery's body and check its `event` is one of the eleven of spec part 6.
 *
 * @example
 * const { event, crawler_uuid } = parseCrawlEvent(delivery.body)
 */
export function parseCrawlEvent(body: Uint8Array | string): CrawlEventPayload {
  let value: unknown;
  try {
    value = JSON.parse(
      typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'),
    );
  } catch {
    throw new WebhookError(400, 'the crawl delivery is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new WebhookError(400, 'the crawl delivery must be a JSON object');
  }
  const event = (value as { event?: unknown }).event;
  if (typeof event !== 'string' || !(CRAWLER_EVENTS as readonly string[]).includes(event)) {
    throw new WebhookError(
      400,
      `the crawl delivery's \`event\` must be one of ${CRAWLER_EVENTS.join(', ')} (got ${JSON.stringify(event)?.slice(0, 40)})`,
    );
  }
  return value as CrawlEventPayload;
}
