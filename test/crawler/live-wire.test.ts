import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Clock, CrawlerClient } from '../../packages/cloud-browser/src/crawler/index.js';
import { type CrawlerError, isCrawlerError } from '../../packages/cloud-browser/src/index.js';
import { type LiveWire, startLiveWire } from '../support/live-wire.js';
import { rejection } from '../support/rejection.js';

// The client against a service that speaks only the live wire: no `uuid`, no `is_complete`,
// no cursor, only text URL pages, envelope-only errors.
let live: LiveWire;
let client: CrawlerClient;
const clock: Clock = { now: () => 0, sleep: async () => {} };

beforeAll(async () => {
  live = await startLiveWire(250);
  client = new CrawlerClient({ key: live.key, baseUrl: live.url, clock });
});
afterAll(async () => {
  await live.close();
});

const all = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe('the client on the live wire', () => {
  it('starts, waits on is_finished alone, and reads every URL across three pages of text', async () => {
    const { uuid, crawler_uuid } = await client.start({ url: 'https://site.test/', search: true });
    expect(uuid).toBe(crawler_uuid);
    const seen: boolean[] = [];
    const done = await client.wait(uuid, { pollInterval: 10, onProgress: (s) => seen.push(s.is_complete) });
    expect(seen).toEqual([false, false, true]);
    expect(done).toMatchObject({ uuid, crawler_uuid: uuid, is_finished: true, is_complete: true, is_success: true });
    expect(done.state).toMatchObject({ urls_visited: 250, start_time: 1_800_000_000, stop_reason: 'no_more_urls' });
    const urls = await all(client.urls(uuid));
    expect(urls).toHaveLength(250);
    expect(new Set(urls.map((u) => u.url)).size).toBe(250);
    expect(urls.every((u) => u.status === 'visited' && u.reason === undefined)).toBe(true);
    const pages = live.requests.filter((r) => r.path.endsWith('/urls')).map((r) => r.query.get('page'));
    expect(pages).toEqual(['1', '2', '3', '4']);
    expect(await all(client.urls(uuid, { status: 'failed' }))).toEqual([
      { url: 'https://site.test/broken', status: 'failed', reason: 'http_404' },
      { url: 'https://site.test/a,b', status: 'failed', reason: 'robots_txt' },
    ]);
  });

  it('reads every page of contents across the map pages, following links.next', async () => {
    const { uuid } = await client.start({ url_list: ['https://site.test/'] });
    const before = live.requests.length;
    const contents = await all(client.contents(uuid, { formats: ['markdown'], limit: 50 }));
    expect(contents).toHaveLength(250);
    expect(contents[7]).toEqual({ url: 'https://site.test/p/7', content: { markdown: '# https://site.test/p/7' } });
    const asked = live.requests.slice(before).filter((r) => r.path.endsWith('/contents'));
    expect(asked).toHaveLength(5);
    expect(asked.every((r) => r.query.get('key') === live.key)).toBe(true);
    expect(asked.map((r) => r.query.get('offset'))).toEqual([null, '50', '100', '150', '200']);
  });

  it('reads one page, gives null for one never crawled, and reads a batch', async () => {
    const { uuid } = await client.start({ url: 'https://site.test/' });
    expect(await client.read(uuid, 'https://site.test/p/1', { format: 'markdown' })).toBe('# https://site.test/p/1');
    expect(await client.read(uuid, 'https://site.test/never', { format: 'markdown' })).toBeNull();
    expect(
      await client.contentsBatch(uuid, ['https://site.test/p/1', 'https://site.test/p/2', 'https://site.test/none'], {
        formats: ['markdown', 'text'],
      }),
    ).toEqual({
      'https://site.test/p/1': { markdown: 'markdown:https://site.test/p/1', text: 'text:https://site.test/p/1' },
      'https://site.test/p/2': { markdown: 'markdown:https://site.test/p/2', text: 'text:https://site.test/p/2' },
    });
  });

  it('searches with crawl_ids and reads the skipped crawls', async () => {
    const res = await client.search({ crawls: ['c-a', 'c-b'], query: 'subscription' });
    expect(res.results).toEqual([
      expect.objectContaining({ rank: 1, crawler_uuid: 'c-a', url: 'https://site.test/p/3', title: 'Pricing' }),
    ]);
    expect(res.results[0]?.text).toBe('A subscription costs 9 euros.');
    expect(res.skipped).toEqual([{ crawler_uuid: 'c-b', reason: 'search_not_ready', status: 'BUILDING' }]);
    expect(res.completeness).toBe('exact');
  });

  it('streams a prompt of JSON-string tokens, with its source and done frames', async () => {
    const stream = client.prompt({ crawls: ['c-a'], prompt: 'How much?' });
    expect(await stream.text()).toBe('A subscription costs "9" euros [1]');
    expect(stream.sources.map((s) => s.url)).toEqual(['https://site.test/p/3']);
    expect(stream.done).toEqual({ sources_used: [1], sources_dropped: 0, truncated: false });
  });

  it('changes and runs refreshes, reading the block at the top level', async () => {
    const { uuid } = await client.start({ url: 'https://site.test/' });
    const off = await rejection(client.refresh(uuid));
    expect(isCrawlerError(off) && off.code).toBe('ERR::CRAWLER::REFRESH_NOT_ENABLED');
    expect(await client.updateRefresh(uuid, { refresh: true, refresh_interval: 7200 })).toMatchObject({
      enabled: true,
      interval_seconds: 7200,
      status: 'SCHEDULED',
      next_run_at: '2027-01-01T00:00:00Z',
    });
    expect(await client.refresh(uuid)).toMatchObject({ enabled: true, status: 'RUNNING', generation: 1 });
  });

  it('cancels (202, no body) and then waits to a CrawlerError naming the cancelled crawl', async () => {
    const { uuid } = await client.start({ url: 'https://site.test/' });
    expect(await client.cancel(uuid)).toEqual({});
    const error = (await rejection(client.wait(uuid))) as CrawlerError;
    expect(error.code).toBe('ERR::CRAWLER::CANCELLED');
    expect(error.message).toContain('user_cancelled');
  });

  it('reads envelope-only errors: code and status, on a JSON and on a text endpoint', async () => {
    for (const call of [client.status('nope'), all(client.urls('nope')), client.artifact('nope', { type: 'warc' })]) {
      const error = (await rejection(call)) as CrawlerError;
      expect(isCrawlerError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'ERR::CRAWLER::NOT_FOUND', http_status_code: 404, reason: 'Error' });
      expect(error.error_id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
