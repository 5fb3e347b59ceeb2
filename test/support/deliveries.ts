/** Crawl delivery bodies in the shape of D17, for receiver tests. */
import type { CrawlerEvent } from '../../packages/cloud-browser/src/webhooks/index.js';

/** A `{event, payload}` body with the common fields every payload carries. */
export function crawlBody(event: CrawlerEvent, crawl = 'c-1', extra: Record<string, unknown> = {}) {
  return {
    event,
    payload: {
      crawler_uuid: crawl,
      project: 'default',
      env: 'TEST',
      action: event.replace(/^crawler_/, ''),
      state: {
        urls_visited: 3,
        urls_extracted: 3,
        urls_failed: 0,
        urls_skipped: 1,
        urls_to_crawl: 0,
        api_credit_used: 3,
        duration: 2,
        start_time: 1_800_000_000,
        stop_time: 1_800_000_002,
        stop_reason: 'no_more_urls',
      },
      seed_url: 'https://site.test/',
      links: { status: `https://api.test/crawl/${crawl}/status` },
      ...extra,
    },
  };
}
