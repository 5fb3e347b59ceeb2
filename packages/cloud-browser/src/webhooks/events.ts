/** Reading a crawl delivery's JSON body (docs/decisions.md D17): `{event, payload}`, typed per event. Pure. */
import type { CrawlRefreshState, CrawlSearchState, CrawlState } from '../crawler/wire.js';
import { WebhookError } from '../errors.js';
import { CRAWLER_EVENTS, type CrawlerEvent } from './constants.js';

/** What every crawl event's payload carries (docs/decisions.md D17). */
export interface CrawlEventCommon {
  crawler_uuid: string;
  project: string;
  /** `LIVE` or `TEST`. */
  env: string;
  /** Empty on the two search events. */
  action: string;
  /** The crawl's counters when the event was sent. */
  state: CrawlState;
  [field: string]: unknown;
}

/** The crawl's seed and its status route, on lifecycle, search and refresh events. */
export interface CrawlEventSeed {
  seed_url: string;
  links: { status: string; [link: string]: unknown };
}

/** The payload of each of the eleven events (docs/decisions.md D17). */
export interface CrawlEventPayloads {
  crawler_started: CrawlEventCommon & CrawlEventSeed;
  crawler_stopped: CrawlEventCommon & CrawlEventSeed;
  crawler_cancelled: CrawlEventCommon & CrawlEventSeed;
  crawler_finished: CrawlEventCommon & CrawlEventSeed;
  crawler_url_visited: CrawlEventCommon & {
    url: string;
    scrape: { status_code: number; content: Record<string, string | null>; [field: string]: unknown };
  };
  /** `urls` maps each skipped URL to its reason. */
  crawler_url_skipped: CrawlEventCommon & { urls: Record<string, string> };
  crawler_url_discovered: CrawlEventCommon & { origin: string; discovered_urls: string[] };
  crawler_url_failed: CrawlEventCommon & { url: string; error: string; links: { log: string | null } };
  crawler_search_ready: CrawlEventCommon & Partial<CrawlEventSeed> & { search: CrawlSearchState };
  crawler_search_failed: CrawlEventCommon & Partial<CrawlEventSeed> & { search: CrawlSearchState };
  crawler_updated: CrawlEventCommon &
    Partial<CrawlEventSeed> & {
      /** The refresh block, with the run's counts (`updated`, `removed`…) where the service gives them. */
      refresh: CrawlRefreshState;
      changed_urls: string[];
    };
}

/** A crawl delivery's body: the event's name and its typed payload. Narrow on `event`. */
export type CrawlEventBody = { [E in CrawlerEvent]: { event: E; payload: CrawlEventPayloads[E] } }[CrawlerEvent];

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

// What each event's payload must hold besides the common fields, and of what kind.
const REQUIRED: Partial<Record<CrawlerEvent, [string, 'string' | 'object' | 'array'][]>> = {
  crawler_url_visited: [
    ['url', 'string'],
    ['scrape', 'object'],
  ],
  crawler_url_skipped: [['urls', 'object']],
  crawler_url_discovered: [
    ['origin', 'string'],
    ['discovered_urls', 'array'],
  ],
  crawler_url_failed: [['url', 'string']],
  crawler_search_ready: [['search', 'object']],
  crawler_search_failed: [['search', 'object']],
  crawler_updated: [['refresh', 'object']],
};

function kind(v: unknown): string {
  return Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v;
}

/**
 * Parse a crawl delivery's body (docs/decisions.md D17): `{event, payload}` with `event` one of the eleven of
 * docs/wire.md §6 and the fields that event's payload carries. A body of another shape is a
 * {@link WebhookError} with status 400.
 *
 * @example
 * const body = parseCrawlEvent(delivery.body)
 * if (body.event === 'crawler_url_visited') console.log(body.payload.url, body.payload.scrape.status_code)
 */
export function parseCrawlEvent(body: Uint8Array | string): CrawlEventBody {
  let value: unknown;
  try {
    value = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body));
  } catch {
    throw new WebhookError(400, 'the crawl delivery is not JSON');
  }
  if (!isRecord(value)) throw new WebhookError(400, 'the crawl delivery must be a JSON object');
  const event = value.event;
  if (typeof event !== 'string' || !(CRAWLER_EVENTS as readonly string[]).includes(event)) {
    throw new WebhookError(
      400,
      `the crawl delivery's \`event\` must be one of ${CRAWLER_EVENTS.join(', ')} (got ${JSON.stringify(event)?.slice(0, 40)})`,
    );
  }
  const payload = value.payload;
  if (!isRecord(payload)) {
    throw new WebhookError(400, `the ${event} delivery has no \`payload\` object: the body is {event, payload}`);
  }
  const wanted: [string, string][] = [
    ['crawler_uuid', 'string'],
    ['state', 'object'],
    ...(REQUIRED[event as CrawlerEvent] ?? []),
  ];
  for (const [field, type] of wanted) {
    if (kind(payload[field]) !== type) {
      throw new WebhookError(
        400,
        `the ${event} payload's \`${field}\` must be ${type === 'array' ? 'a list' : `a${type === 'object' ? 'n' : ''} ${type}`} (got ${kind(payload[field])})`,
      );
    }
  }
  return value as unknown as CrawlEventBody;
}
