import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrawlerClient } from '../../packages/cloud-browser/src/crawler/index.js';
import { type CrawlerError, isCrawlerError, type ServiceError } from '../../packages/cloud-browser/src/index.js';
import {
  type Delivery,
  parseCrawlEvent,
  serveWebhooks,
  type WebhookServer,
} from '../../packages/cloud-browser/src/webhooks/index.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { all } from '../support/all.js';
import { type CrawlSite, DOCS, startCrawlSite } from '../support/crawl-site.js';

const SECRET = 'whsec-emulator-test-1';
let emulator: Emulator;
let site: CrawlSite;
let receiver: WebhookServer;
let client: CrawlerClient;
const received: { event: string; crawl: string; body: string }[] = [];

beforeAll(async () => {
  site = await startCrawlSite();
  receiver = await serveWebhooks({
    port: 0,
    secrets: SECRET,
    onDelivery: (d: Delivery) => {
      const e = parseCrawlEvent(d.body);
      received.push({ event: e.event, crawl: e.payload.crawler_uuid, body: d.body.toString('utf8') });
    },
  });
  emulator = await startEmulator({ webhooks: { hooks: { url: receiver.url, secret: SECRET } } });
  client = new CrawlerClient({ key: emulator.apiKey, baseUrl: emulator.apiUrl });
});
afterAll(async () => {
  await emulator.close();
  await receiver.close();
  await site.close();
});

describe('a crawl of a local site', () => {
  let uuid: string;
  beforeAll(async () => {
    ({ uuid } = await client.start({
      url: `${site.origin}/`,
      exclude_paths: ['/blog/*'],
      content_formats: ['markdown', 'text', 'clean_html', 'html'],
      search: true,
      max_concurrency: 8,
      webhook_name: 'hooks',
      webhook_events: ['crawler_started', 'crawler_url_failed', 'crawler_search_ready', 'crawler_finished'],
      extraction_rules: { heading: 'h1', price: { selector: '.price' } },
    }));
    await client.wait(uuid, { pollInterval: 50 });
  });

  it('visits, fails and skips exactly the expected URLs', async () => {
    const urls = (
      await Promise.all((['visited', 'failed', 'skipped'] as const).map((status) => all(client.urls(uuid, { status }))))
    ).flat();
    const by = (status: string) =>
      urls
        .filter((u) => u.status === status)
        .map(
          (u) =>
            new URL(u.url).pathname +
            (new URL(u.url).host === new URL(site.origin).host ? '' : `@${new URL(u.url).host}`),
        )
        .sort();
    const docs = Array.from({ length: DOCS }, (_, i) => `/docs/${i + 1}`);
    expect(by('visited')).toEqual(['/', ...docs, '/slow'].sort());
    expect(by('failed')).toEqual(['/broken']);
    expect(by('skipped')).toEqual(['/blog/first-post', '/page@external.test', '/private/a', '/private/b'].sort());
    const reasons = Object.fromEntries(
      urls.filter((u) => u.status === 'skipped').map((u) => [new URL(u.url).pathname, u.reason]),
    );
    expect(reasons).toEqual({
      '/private/a': 'robots_txt',
      '/private/b': 'robots_txt',
      '/blog/first-post': 'exclude_paths',
      '/page': 'external_link',
    });
    expect(site.hits.get('/private/a')).toBeUndefined();
    expect(site.hits.get('/hidden')).toBeUndefined();
  });

  it('reports the D11 status record', async () => {
    const status = await client.status(uuid);
    expect(status).toMatchObject({
      uuid,
      crawler_uuid: uuid,
      status: 'DONE',
      is_complete: true,
      is_finished: true,
      is_success: true,
      refresh: null,
    });
    expect(status.search).toMatchObject({ status: 'READY', documents: DOCS + 2, generation: 1 });
    expect(Date.parse(status.search?.built_at ?? '')).toBeGreaterThan(0);
    expect(status.state.stop_time).toBeGreaterThanOrEqual(status.state.start_time ?? Number.POSITIVE_INFINITY);
    expect(Number.isInteger(status.state.start_time)).toBe(true);
    expect(status.state).toMatchObject({
      urls_visited: DOCS + 2,
      urls_failed: 1,
      urls_skipped: 4,
      urls_to_crawl: 0,
      stop_reason: 'no_more_urls',
    });
    expect(status.state.api_credit_used).toBe(DOCS + 3);
  });

  it('gives page contents in all four formats, and the extraction', async () => {
    const [doc] = await all(
      client.contents(uuid, { url: `${site.origin}/docs/7`, formats: ['html', 'clean_html', 'text', 'markdown'] }),
    );
    expect(doc?.content.html).toContain('<script>var tracking = 1;</script>');
    expect(doc?.content.clean_html).not.toContain('<script');
    expect(doc?.content.clean_html).not.toContain('<style');
    expect(doc?.content.clean_html).toContain('<h1>Doc 7</h1>');
    expect(doc?.content.markdown).toContain('# Doc 7');
    // Links absolute, headings as written.
    expect(doc?.content.markdown).toContain(`[next](${site.origin}/docs/8)`);
    expect(doc?.content.text).toMatch(/^Doc 7\n/);
    expect(doc?.content.text).toContain('the subscription costs 42 euros');
    expect(doc?.content.text).not.toContain('tracking');
    expect(JSON.parse(doc?.content.extracted_data ?? 'null')).toEqual({ heading: 'Doc 7', price: '5 EUR' });
  });

  it('searches the index and streams an extractive answer', async () => {
    const res = await client.search({ crawls: [uuid], query: 'subscription pricing' });
    expect(res.results[0]).toMatchObject({ rank: 1, crawler_uuid: uuid, url: `${site.origin}/docs/7`, title: 'Doc 7' });
    expect(res.results[0]?.text).toContain('42 euros');
    expect(res.results[0]?.contents_url).toBe(
      `${emulator.apiUrl}/crawl/${uuid}/contents?url=${encodeURIComponent(`${site.origin}/docs/7`)}`,
    );
    expect(res.skipped).toEqual([]);
    const stream = client.prompt({ crawls: [uuid], prompt: 'How much is the subscription?' });
    const answer = await stream.text();
    expect(answer).toContain('42 euros');
    expect(stream.sources[0]).toMatchObject({ id: 1, crawler_uuid: uuid, url: `${site.origin}/docs/7` });
    expect(stream.done?.sources_used).toEqual(stream.sources.map((s) => s.id));
  });

  it('ends a prompt stream with the injected error after the tokens already given', async () => {
    emulator.faults.failNextPromptAfter(3);
    const tokens: string[] = [];
    let failure: unknown;
    try {
      for await (const t of client.prompt({ crawls: [uuid], prompt: 'subscription' })) tokens.push(t);
    } catch (e) {
      failure = e;
    }
    expect(tokens).toHaveLength(3);
    expect((failure as ServiceError).code).toBe('ERR::CRAWLER::PROMPT_FAILED');
  });

  it('lists crawls without an index as skipped, and answers the SEARCH errors', async () => {
    const { uuid: plain } = await client.start({ url: `${site.origin}/docs/1`, page_limit: 1 });
    await client.wait(plain, { pollInterval: 50 });
    const res = await client.search({ crawls: [uuid, plain], query: 'pricing' });
    expect(res.skipped).toEqual([{ crawler_uuid: plain, reason: 'search_not_enabled', status: 'DISABLED' }]);
    expect(res.results.length).toBeGreaterThan(0);
    const only = (await client.search({ crawls: [plain], query: 'x' }).catch((e) => e)) as CrawlerError;
    expect(only.code).toBe('ERR::CRAWLER::SEARCH_NOT_ENABLED');
    const raw = await fetch(`${emulator.apiUrl}/crawl/search?key=${emulator.apiKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ crawl_ids: Array.from({ length: 11 }, (_, i) => `${uuid.slice(0, -2)}${i}`), query: 'x' }),
    });
    const many = (await client
      .search({ crawls: Array.from({ length: 11 }, (_, i) => (i === 0 ? uuid : `c-${i}`)), query: 'x' })
      .catch((e) => e)) as CrawlerError;
    expect(raw.status).toBe(400);
    expect(many.code).toBe('ERR::CRAWLER::SEARCH_TOO_MANY_CRAWLS');
  });

  it('streams a WARC that a WARC reader accepts, and a HAR', async () => {
    const warc = await client.artifact(uuid, { type: 'warc' });
    const { WARCParser } = await import('warcio');
    const records: {
      type: string | null | undefined;
      uri: string | null | undefined;
      status: number | undefined;
      body: string;
    }[] = [];
    for await (const record of new WARCParser(
      Readable.fromWeb(warc.stream as import('node:stream/web').ReadableStream<Uint8Array>),
    )) {
      records.push({
        type: record.warcType,
        uri: record.warcTargetURI,
        status: record.httpHeaders?.statusCode as number | undefined,
        body: await record.contentText(),
      });
    }
    expect(records[0]?.type).toBe('warcinfo');
    const responses = records.filter((r) => r.type === 'response');
    expect(responses).toHaveLength(DOCS + 3);
    const doc7 = responses.find((r) => r.uri === `${site.origin}/docs/7`);
    expect(doc7?.status).toBe(200);
    expect(doc7?.body).toContain('the subscription costs 42 euros');
    expect(responses.find((r) => r.uri === `${site.origin}/broken`)?.status).toBe(500);
    const har = await client.artifact(uuid, { type: 'har' });
    const parsed = JSON.parse(await new Response(har.stream).text()) as {
      log: { entries: { request: { url: string } }[] };
    };
    expect(parsed.log.entries.map((e) => e.request.url)).toContain(`${site.origin}/docs/7`);
  });

  it('delivers every subscribed event once, verified, in order', async () => {
    await emulator.crawler.settled();
    const mine = received.filter((r) => r.crawl === uuid).map((r) => r.event);
    expect(mine).toEqual(['crawler_started', 'crawler_url_failed', 'crawler_search_ready', 'crawler_finished']);
    expect(emulator.crawler.deliveries[0]).toMatchObject({ event: 'ping', status: 200 });
    expect(emulator.crawler.deliveries.filter((d) => d.crawl === uuid).every((d) => d.status === 200)).toBe(true);
  });

  it('sends each delivery as {event, payload} with the D17 payload of its event', async () => {
    await emulator.crawler.settled();
    const bodies = Object.fromEntries(
      received
        .filter((r) => r.crawl === uuid)
        .map((r) => [r.event, JSON.parse(r.body) as { payload: Record<string, unknown> }]),
    );
    for (const body of Object.values(bodies)) {
      expect(Object.keys(body)).toEqual(['event', 'payload']);
      expect(body.payload).toMatchObject({ crawler_uuid: uuid, project: expect.any(String), env: 'TEST' });
      expect(body.payload.state).toMatchObject({
        urls_visited: expect.any(Number),
        api_credit_used: expect.any(Number),
      });
    }
    expect(bodies.crawler_finished?.payload).toMatchObject({
      action: 'finished',
      seed_url: `${site.origin}/`,
      links: { status: `${emulator.apiUrl}/crawl/${uuid}/status` },
      state: { stop_reason: 'no_more_urls', urls_visited: DOCS + 2 },
    });
    expect(bodies.crawler_url_failed?.payload).toMatchObject({
      action: 'url_failed',
      url: `${site.origin}/broken`,
      error: 'ERR::SCRAPE::BAD_UPSTREAM_RESPONSE',
      links: { log: null },
    });
    expect(bodies.crawler_search_ready?.payload).toMatchObject({
      action: '',
      search: { status: 'READY', documents: DOCS + 2 },
    });
  });
});

describe('the configuration shapes the crawl', () => {
  const paths = async (uuid: string, status = 'visited') =>
    (await all(client.urls(uuid, { status: status as 'visited' }))).map((u) => new URL(u.url).pathname).sort();
  const crawl = async (config: Record<string, unknown>) => {
    const { uuid } = await client.start({ url: `${site.origin}/`, ...config });
    const done = await client.wait(uuid, { pollInterval: 30 });
    return { uuid, done };
  };

  it('stops at page_limit, says why, and emits crawler_stopped', async () => {
    const { uuid, done } = await crawl({
      page_limit: 5,
      max_concurrency: 1,
      webhook_name: 'hooks',
      webhook_events: ['crawler_stopped'],
    });
    expect(done.state.urls_visited).toBe(5);
    expect(done.state.stop_reason).toBe('page_limit');
    await emulator.crawler.settled();
    expect(received.filter((r) => r.crawl === uuid).map((r) => r.event)).toEqual(['crawler_stopped']);
  });

  it('goes no deeper than max_depth', async () => {
    const { uuid } = await crawl({ max_depth: 0 });
    expect(await paths(uuid)).toEqual(['/']);
  });

  it('finds pages only the sitemap lists with use_sitemaps', async () => {
    const { uuid } = await crawl({ use_sitemaps: true, max_depth: 1 });
    expect(await paths(uuid)).toContain('/orphan');
    const { uuid: without } = await crawl({ max_depth: 1 });
    expect(await paths(without)).not.toContain('/orphan');
  });

  it('crawls what robots.txt disallows when respect_robots_txt is false, and follows nofollow with ignore_no_follow', async () => {
    const { uuid } = await crawl({ respect_robots_txt: false, ignore_no_follow: true, max_depth: 1 });
    const visited = await paths(uuid);
    expect(visited).toEqual(expect.arrayContaining(['/private/a', '/private/b', '/hidden']));
  });

  it('keeps to include_only_paths', async () => {
    const { uuid } = await crawl({ include_only_paths: ['/docs/1*'], max_depth: 1 });
    expect(await paths(uuid)).toEqual(
      [
        '/',
        '/docs/1',
        '/docs/10',
        '/docs/11',
        '/docs/12',
        '/docs/13',
        '/docs/14',
        '/docs/15',
        '/docs/16',
        '/docs/17',
        '/docs/18',
        '/docs/19',
      ].sort(),
    );
  });

  it('sends the configured headers and user agent', async () => {
    const { uuid } = await client.start({
      url: `${site.origin}/echo-headers`,
      headers: { 'x-crawl-test': 'yes', authorization: 'Bearer site-token-93c1' },
      user_agent: 'CrawlTestBot/1.0',
      webhook_name: 'hooks',
      webhook_events: ['crawler_started'],
    });
    await client.wait(uuid, { pollInterval: 30 });
    // The started event never echoes the headers' values.
    await emulator.crawler.settled();
    const started = received.find((r) => r.crawl === uuid && r.event === 'crawler_started');
    expect(JSON.parse(started?.body ?? '{}').payload.seed_url).toBe(`${site.origin}/echo-headers`);
    expect(started?.body).not.toContain('site-token-93c1');
    const [page] = await all(client.contents(uuid, { formats: ['text'] }));
    expect(page?.content.text).toContain('"ua":"CrawlTestBot/1.0"');
    expect(page?.content.text).toContain('"custom":"yes"');
  });

  it('crawls exactly the URLs of a remote_url_list', async () => {
    const { uuid } = await client.start({ remote_url_list: `${site.origin}/urls.txt` });
    await client.wait(uuid, { pollInterval: 30 });
    expect(await paths(uuid)).toEqual(['/docs/5', '/docs/6']);
  });

  it('stops at max_api_credit, one credit a page', async () => {
    const { done } = await crawl({ max_api_credit: 3, max_concurrency: 1 });
    expect(done.state.api_credit_used).toBe(3);
    expect(done.state.stop_reason).toBe('max_api_credit');
  });
});

describe('crawls of URL lists, refresh and cancel', () => {
  it('crawls exactly the 10,000 URLs of a url_list', async () => {
    const urls = Array.from({ length: 10_000 }, (_, i) => `${site.origin}/item/${i}`);
    const { uuid } = await client.start({ url_list: urls, max_concurrency: 16 });
    const done = await client.wait(uuid, { pollInterval: 100 });
    expect(done.state.urls_visited).toBe(10_000);
    const listed = await all(client.urls(uuid, { status: 'visited' }));
    expect(new Set(listed.map((u) => u.url))).toEqual(new Set(urls));
  }, 120_000);

  it('re-indexes only the page that changed on a refresh run, and says so', async () => {
    const { uuid } = await client.start({
      url: `${site.origin}/`,
      max_depth: 1,
      search: true,
      refresh: true,
      refresh_interval: 3600,
      webhook_name: 'hooks',
      webhook_events: ['crawler_updated'],
    });
    await client.wait(uuid, { pollInterval: 50 });
    site.texts.set('/docs/3', 'Document three now talks about zeppelins.');
    expect((await client.search({ crawls: [uuid], query: 'zeppelins' })).results).toEqual([]);
    await emulator.crawler.advanceTime(3600 * 1000);
    const status = await client.status(uuid);
    expect(status.uuid).toBe(uuid);
    expect(status.refresh).toMatchObject({ enabled: true, interval_seconds: 3600, status: 'SCHEDULED', generation: 1 });
    expect(Date.parse(status.refresh?.next_run_at ?? '') - Date.parse(status.refresh?.last_run_at ?? '')).toBe(
      3600 * 1000,
    );
    expect(status.search?.generation).toBe(2);
    expect((await client.search({ crawls: [uuid], query: 'zeppelins' })).results[0]?.url).toBe(`${site.origin}/docs/3`);
    await emulator.crawler.settled();
    const updates = received.filter((r) => r.crawl === uuid);
    expect(updates.map((r) => r.event)).toEqual(['crawler_updated']);
    expect(JSON.parse(updates[0]?.body ?? '{}').payload).toMatchObject({
      changed_urls: [`${site.origin}/docs/3`],
      refresh: { enabled: true, generation: 1, updated: 1 },
      documents: { updated: [`${site.origin}/docs/3`], removed: [], truncated: false },
    });
    site.texts.delete('/docs/3');
  });

  it('answers the REFRESH errors where they apply', async () => {
    const { uuid } = await client.start({ url: `${site.origin}/docs/2`, page_limit: 1 });
    await client.wait(uuid, { pollInterval: 50 });
    const error = (await client.refresh(uuid).catch((e) => e)) as CrawlerError;
    expect(isCrawlerError(error)).toBe(true);
    expect(error.code).toBe('ERR::CRAWLER::REFRESH_NOT_ENABLED');
  });

  it('cancels a crawl mid-way: CANCELLED and crawler_cancelled', async () => {
    const { uuid } = await client.start({
      url: `${site.origin}/`,
      max_concurrency: 1,
      delay: 200,
      webhook_name: 'hooks',
    });
    await new Promise((r) => setTimeout(r, 300));
    await client.cancel(uuid);
    const error = (await client.wait(uuid, { pollInterval: 50 }).catch((e) => e)) as CrawlerError;
    expect(error.code).toBe('ERR::CRAWLER::CANCELLED');
    expect(error.uuid).toBe(uuid);
    expect((await client.status(uuid)).state.stop_reason).toBe('user_cancelled');
    await emulator.crawler.settled();
    expect(received.filter((r) => r.crawl === uuid).map((r) => r.event)).toEqual([
      'crawler_started',
      'crawler_cancelled',
    ]);
  });

  it('refuses an invalid configuration with 400 and a wrong key with 401', async () => {
    const bad = new CrawlerClient({ key: 'not-the-key-123', baseUrl: emulator.apiUrl });
    expect(((await bad.start({ url: `${site.origin}/` }).catch((e) => e)) as ServiceError).http_status_code).toBe(401);
    const res = await fetch(`${emulator.apiUrl}/crawl?key=${emulator.apiKey}`, {
      method: 'POST',
      body: (() => {
        const f = new FormData();
        f.set('config', JSON.stringify({ url: `${site.origin}/`, refresh_interval: 60 }));
        return f;
      })(),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('refresh_interval');
  });
});

describe('the wire, asked directly', () => {
  let uuid: string;
  const api = (path: string, init?: RequestInit) =>
    fetch(`${emulator.apiUrl}${path}${path.includes('?') ? '&' : '?'}key=${emulator.apiKey}`, init);
  const post = (path: string, body: unknown, method = 'POST') =>
    api(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    ({ uuid } = await client.start({
      url: `${site.origin}/docs/1`,
      max_depth: 1,
      search: true,
      content_formats: ['markdown'],
    }));
    await client.wait(uuid, { pollInterval: 30 });
  });

  it('answers every error with the part-7 fields and the envelope', async () => {
    const res = await api('/crawl/no-such-crawl/status');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      status: 'error',
      http_code: 404,
      reason: 'Not Found',
      error_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      message: 'no crawl no-such-crawl',
      code: 'ERR::CRAWLER::NOT_FOUND',
      http_status_code: 404,
      is_retryable: false,
    });
  });

  it('takes a JSON start with url_list inside, and refuses the key in the body', async () => {
    const res = await post('/crawl', { url_list: [`${site.origin}/docs/2`] });
    const started = (await res.json()) as { crawler_uuid: string; uuid: string; status: string };
    expect(started).toEqual({ crawler_uuid: started.uuid, uuid: expect.any(String), status: 'PENDING' });
    await client.wait(started.uuid, { pollInterval: 30 });
    expect((await all(client.urls(started.uuid))).map((u) => u.url)).toEqual([`${site.origin}/docs/2`]);
    const keyed = await post('/crawl', { url: `${site.origin}/`, key: emulator.apiKey });
    expect(keyed.status).toBe(400);
    expect(await keyed.text()).not.toContain(emulator.apiKey);
  });

  it.each([
    ['/urls?per_page=1001', 'per_page'],
    ['/urls?page=0', 'page'],
    ['/urls?status=lost', 'status'],
    ['/contents?limit=51', 'limit'],
    ['/contents?formats=pdf', 'pdf'],
  ])('refuses %s with a 400 naming it', async (path, name) => {
    const res = await api(`/crawl/${uuid}${path}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain(name);
  });

  it('pages contents with limit and offset, linking next and prev without the key', async () => {
    // The crawl kept two pages: /docs/1 and /docs/2 (/ is outside the base path).
    const first = (await (await api(`/crawl/${uuid}/contents?limit=1`)).json()) as {
      contents: Record<string, Record<string, string | null>>;
      links: { next: string | null; prev: string | null; crawled_urls: string };
    };
    expect(Object.keys(first.contents)).toHaveLength(1);
    expect(Object.values(first.contents).every((c) => Object.keys(c).join() === 'markdown')).toBe(true);
    expect(first.links.prev).toBeNull();
    expect(first.links.next).toBe(`${emulator.apiUrl}/crawl/${uuid}/contents?formats=markdown&limit=1&offset=1`);
    expect(first.links.crawled_urls).toBe(`${emulator.apiUrl}/crawl/${uuid}/urls`);
    const second = (await (await api(`/crawl/${uuid}/contents?limit=1&offset=1`)).json()) as typeof first;
    expect(Object.keys(second.contents)).toHaveLength(1);
    expect(Object.keys(second.contents)).not.toEqual(Object.keys(first.contents));
    expect(second.links.next).toBeNull();
    expect(second.links.prev).toBe(`${emulator.apiUrl}/crawl/${uuid}/contents?formats=markdown&limit=1&offset=0`);
    expect(JSON.stringify([first, second])).not.toContain(emulator.apiKey);
  });

  it('answers plain mode by format, 404 for a format the crawl did not keep', async () => {
    const url = encodeURIComponent(`${site.origin}/docs/1`);
    const md = await api(`/crawl/${uuid}/contents?plain=true&url=${url}&formats=markdown`);
    expect(md.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(await md.text()).toContain('# Doc 1');
    const html = await api(`/crawl/${uuid}/contents?plain=true&url=${url}&formats=html`);
    expect(html.status).toBe(404);
    expect(await html.json()).toMatchObject({
      code: 'ERR::CRAWLER::CONTENT_NOT_FOUND',
      message: 'the crawl did not keep the html format',
    });
    expect(await client.read(uuid, `${site.origin}/docs/1`, { format: 'html' })).toBeNull();
  });

  it('lists the URLs still to crawl as pending while a crawl runs', async () => {
    const { uuid: slow } = await client.start({ url: `${site.origin}/`, max_concurrency: 1, delay: 200 });
    let pending: string[] = [];
    for (let i = 0; i < 80 && pending.length <= 1; i++) {
      pending = (await all(client.urls(slow, { status: 'pending' }))).map((u) => u.url);
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(pending.length).toBeGreaterThan(1);
    expect(pending).toContain(`${site.origin}/docs/40`);
    await client.cancel(slow);
    expect(await all(client.urls(slow, { status: 'pending' }))).toEqual([]);
  });

  it('turns refresh on with PATCH, checks the interval, then runs a refresh on demand', async () => {
    expect((await post(`/crawl/${uuid}/refresh`, {})).status).toBe(400);
    const bad = await post(`/crawl/${uuid}/refresh`, { refresh_interval: 60 }, 'PATCH');
    expect(await bad.json()).toMatchObject({ code: 'ERR::CRAWLER::REFRESH_INTERVAL_INVALID', http_code: 400 });
    const unknown = await post(`/crawl/${uuid}/refresh`, { interval_seconds: 7200 }, 'PATCH');
    expect(((await unknown.json()) as { message: string }).message).toContain('interval_seconds');
    const on = await client.updateRefresh(uuid, { refresh: true, refresh_interval: 7200 });
    expect(on).toMatchObject({ enabled: true, interval_seconds: 7200, status: 'SCHEDULED', generation: 0 });
    expect(await client.refresh(uuid)).toMatchObject({ enabled: true, generation: 1 });
    await new Promise((r) => setTimeout(r, 50));
    await client.wait(uuid, { pollInterval: 30 });
    expect((await client.status(uuid)).refresh).toMatchObject({ generation: 1, status: 'SCHEDULED' });
    expect(await client.updateRefresh(uuid, { refresh: false })).toMatchObject({ enabled: false, status: 'DISABLED' });
    expect((await client.status(uuid)).refresh).toBeNull();
  });

  it('pages search results with a cursor, ranks continuing', async () => {
    const first = await client.search({ crawls: [uuid], query: 'document', limit: 1 });
    expect(first.results.map((r) => r.rank)).toEqual([1]);
    expect(first.cursor).toEqual(expect.any(String));
    const second = await client.search({ crawls: [uuid], query: 'document', limit: 1, cursor: first.cursor as string });
    expect(second.results.map((r) => r.rank)).toEqual([2]);
    expect(second.results[0]?.url).not.toBe(first.results[0]?.url);
    const filtered = await client.search({
      crawls: [uuid],
      query: 'document',
      filters: { url_prefix: `${site.origin}/docs/2` },
    });
    expect(filtered.results.map((r) => r.url)).toEqual([`${site.origin}/docs/2`]);
  });

  it('streams the prompt as SSE: a keep-alive first, sources, JSON-string tokens, then done', async () => {
    const res = await post('/crawl/prompt', { crawl_ids: [uuid], prompt: 'topic 1', generation: { stream: true } });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const text = await res.text();
    expect(text.startsWith(': keep-alive\n\n')).toBe(true);
    const frames = text
      .split('\n\n')
      .filter((f) => f.startsWith('event: '))
      .map((f) => {
        const [event, data] = f.split('\n');
        return { event: event?.slice(7), data: JSON.parse(data?.slice(6) ?? 'null') as unknown };
      });
    const kinds = frames.map((f) => f.event);
    expect(kinds.lastIndexOf('source')).toBeLessThan(kinds.indexOf('token'));
    expect(kinds.at(-1)).toBe('done');
    expect(frames.filter((f) => f.event === 'token').every((f) => typeof f.data === 'string')).toBe(true);
    const sources = frames.filter((f) => f.event === 'source').map((f) => (f.data as { id: number }).id);
    expect(sources).toEqual([1, 2]);
    expect(frames.at(-1)?.data).toEqual({ sources_used: sources, sources_dropped: 0, truncated: false });
  });
});
