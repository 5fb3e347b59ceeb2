import { getEventListeners } from 'node:events';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Clock, CrawlerClient, toCrawlRequest } from '../../packages/cloud-browser/src/crawler/index.js';
import {
  type CrawlerError,
  isConfigError,
  isConnectionError,
  isCrawlerError,
  isServiceError,
  isTimeoutError,
  type ServiceError,
} from '../../packages/cloud-browser/src/index.js';
import { type CrawlerServer, json, type Reply, startCrawlerServer } from '../support/crawler-server.js';
import { rejection } from '../support/rejection.js';

const KEY = 'crawl-key-5f9e2a7c';
let server: CrawlerServer;
let sleeps: number[];
let now: number;
const clock: Clock = {
  now: () => now,
  sleep: async (ms, signal) => {
    if (signal?.aborted) throw signal.reason;
    sleeps.push(ms);
    now += ms;
  },
};
let client: CrawlerClient;

beforeEach(async () => {
  server = await startCrawlerServer();
  sleeps = [];
  now = 1_000_000;
  client = new CrawlerClient({ key: KEY, baseUrl: server.url, clock });
});
afterEach(async () => {
  await server.close();
});

const status = (extra: Record<string, unknown>) => ({
  uuid: 'c-1',
  status: 'RUNNING',
  is_complete: false,
  is_success: null,
  state: {
    urls_visited: 1,
    urls_extracted: 1,
    urls_failed: 0,
    urls_skipped: 0,
    urls_to_crawl: 5,
    api_credit_used: 1,
    duration: 1,
    stop_reason: null,
  },
  ...extra,
});

describe('start', () => {
  it('sends a multipart form with url_list: config.json, urls.txt one per line, the key in the query only', async () => {
    server.queue('POST /crawl', json(200, { uuid: 'c-1' }));
    const config = {
      url_list: ['https://a.test/x', 'https://b.test/é'],
      page_limit: 10,
      unblocker: true,
      respect_robots_txt: false,
    };
    expect(await client.start(config)).toEqual({ uuid: 'c-1', crawler_uuid: 'c-1' });
    const [req] = server.received;
    expect(req?.query.get('key')).toBe(KEY);
    expect(JSON.parse(req?.parts.config?.text ?? '')).toEqual(toCrawlRequest(config).config);
    expect(req?.parts.config?.contentType).toBe('application/json');
    expect(req?.parts.config?.filename).toBe('config.json');
    expect(req?.parts.urls?.filename).toBe('urls.txt');
    expect(req?.parts.urls?.text.split('\n').filter(Boolean)).toEqual(config.url_list);
    const everythingButQuery = JSON.stringify({ parts: req?.parts, headers: req?.headers });
    expect(everythingButQuery).not.toContain(KEY);
  });

  it('sends a long list across many batches byte for byte, and again whole when the service asks for a retry', async () => {
    // 100,000 entries: batches of ASCII, one with characters beyond ASCII, odd but valid forms.
    const list = Array.from({ length: 100_000 }, (_, i) =>
      i === 40_000
        ? 'https://bücher.test/ü'
        : i === 70_000
          ? 'HTTPS://UPPER.TEST/'
          : `https://shop.test/item-${i}?ref=x`,
    );
    server.queue(
      'POST /crawl',
      json(503, { message: 'busy', code: 'ERR::SERVICE::BUSY', is_retryable: true }),
      json(200, { uuid: 'c-big' }),
    );
    expect((await client.start({ url_list: list })).uuid).toBe('c-big');
    const expected = `${list.join('\n')}\n`;
    expect(server.received).toHaveLength(2);
    for (const req of server.received) {
      expect(req.parts.urls?.text).toBe(expected);
      expect(req.parts.urls?.contentType).toBe('text/plain');
    }
  });

  it('sends JSON without url_list, as the service takes it', async () => {
    server.queue('POST /crawl', json(200, { crawler_uuid: 'c-2', status: 'PENDING' }));
    const config = { url: 'https://a.test/', page_limit: 5, respect_robots_txt: false, unblocker: true };
    expect(await client.start(config)).toEqual({ uuid: 'c-2', crawler_uuid: 'c-2', status: 'PENDING' });
    const [req] = server.received;
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.json).toEqual({ url: 'https://a.test/', page_limit: 5, respect_robots_txt: false, asp: true });
    expect(req?.parts).toEqual({});
  });

  it('accepts crawler_uuid as the id', async () => {
    server.queue('POST /crawl', json(200, { crawler_uuid: 'c-3', extra: 1 }));
    expect(await client.start({ url: 'https://a.test/' })).toMatchObject({
      uuid: 'c-3',
      crawler_uuid: 'c-3',
      extra: 1,
    });
  });

  it('uses the key of the config, when given, in the query and nowhere else', async () => {
    server.queue('POST /crawl', json(200, { uuid: 'c-4' }));
    await client.start({ url: 'https://a.test/', key: 'other-key-777777' });
    expect(server.received[0]?.query.get('key')).toBe('other-key-777777');
    expect(server.received[0]?.raw).not.toContain('other-key');
  });

  it('is not retried on a 503 the service does not mark retryable', async () => {
    server.queue(
      'POST /crawl',
      json(503, { message: 'busy', code: 'ERR::SERVICE::BUSY' }),
      json(200, { uuid: 'never' }),
    );
    const error = (await rejection(client.start({ url: 'https://a.test/' }))) as ServiceError;
    expect(error.http_status_code).toBe(503);
    expect(server.received).toHaveLength(1);
  });

  it('is retried when the service says is_retryable, waiting at least retry_delay', async () => {
    server.queue(
      'POST /crawl',
      json(503, { message: 'busy', code: 'ERR::SERVICE::BUSY', is_retryable: true, retry_delay: 7 }),
      json(200, { uuid: 'c-5' }),
    );
    expect((await client.start({ url_list: ['https://a.test/'] })).uuid).toBe('c-5');
    expect(server.received).toHaveLength(2);
    expect(server.received[1]?.parts.urls?.text).toBe('https://a.test/\n');
    expect(sleeps[0]).toBeGreaterThanOrEqual(7000);
  });
});

describe('retries (D13)', () => {
  it.each([408, 429, 500, 502, 503])('retries a GET answered %i, with growing delays', async (code) => {
    server.queue(
      'GET /crawl/c-1/status',
      json(code, { message: 'x', code: 'ERR::X' }),
      json(code, { message: 'x', code: 'ERR::X' }),
      json(200, status({})),
    );
    expect((await client.status('c-1')).uuid).toBe('c-1');
    expect(server.received).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
    expect(sleeps[0]).toBeGreaterThanOrEqual(250);
    expect(sleeps[0]).toBeLessThanOrEqual(500);
    expect(sleeps[1]).toBeGreaterThanOrEqual(500);
    expect(sleeps[1]).toBeLessThanOrEqual(1000);
  });

  it('gives up after three retries by default', async () => {
    server.fallback('GET /crawl/c-1/status', json(500, { message: 'down', code: 'ERR::DOWN' }));
    expect(((await rejection(client.status('c-1'))) as ServiceError).http_status_code).toBe(500);
    expect(server.received).toHaveLength(4);
  });

  it('follows retry_times when the service gives it', async () => {
    server.fallback('GET /crawl/c-1/status', json(503, { message: 'down', code: 'ERR::DOWN', retry_times: 1 }));
    await rejection(client.status('c-1'));
    expect(server.received).toHaveLength(2);
  });

  it('waits at least Retry-After', async () => {
    server.queue(
      'GET /crawl/c-1/status',
      json(429, { message: 'slow', code: 'ERR::THROTTLE' }, { 'retry-after': '12' }),
      json(200, status({})),
    );
    await client.status('c-1');
    expect(sleeps[0]).toBeGreaterThanOrEqual(12_000);
  });

  it('does not retry a 400 or 404', async () => {
    server.queue('GET /crawl/c-1/status', json(404, { message: 'no such crawl', code: 'ERR::CRAWLER::NOT_FOUND' }));
    const error = await rejection(client.status('c-1'));
    expect(isServiceError(error)).toBe(true);
    expect(server.received).toHaveLength(1);
  });

  it('retries a network failure', async () => {
    server.queue(
      'GET /crawl/c-1/status',
      (res) => {
        res.socket?.destroy();
      },
      json(200, status({})),
    );
    expect((await client.status('c-1')).uuid).toBe('c-1');
    expect(server.received).toHaveLength(2);
  });

  it('reports a network failure that persists as a ConnectionError without the key', async () => {
    server.fallback('GET /crawl/c-1/status', (res) => {
      res.socket?.destroy();
    });
    const error = await rejection(client.status('c-1'));
    expect(isConnectionError(error)).toBe(true);
    expect(inspect(error, { depth: 10 })).not.toContain(KEY);
  });

  it('stops at once when aborted during a backoff', async () => {
    const controller = new AbortController();
    const aborting: Clock = {
      now: () => now,
      sleep: async () => {
        controller.abort();
        throw controller.signal.reason;
      },
    };
    const c = new CrawlerClient({ key: KEY, baseUrl: server.url, clock: aborting });
    server.fallback('GET /crawl/c-1/status', json(503, { message: 'x', code: 'ERR::X' }));
    const error = await rejection(c.status('c-1', { signal: controller.signal }));
    expect((error as Error).name).toBe('AbortError');
    expect(server.received).toHaveLength(1);
  });

  it('never shows the key in an error, even when the service echoes it', async () => {
    server.queue('GET /crawl/c-1/status', json(401, { message: `bad key=${KEY}`, code: 'ERR::AUTH' }));
    const error = await rejection(client.status('c-1'));
    expect(inspect(error, { depth: 10 })).not.toContain(KEY);
    expect(inspect(client)).not.toContain(KEY);
  });
});

describe('status and wait', () => {
  it('keeps unknown fields of the status record', async () => {
    server.queue('GET /crawl/c-1/status', json(200, status({ brand_new_field: { a: 1 } })));
    expect(await client.status('c-1')).toMatchObject({ brand_new_field: { a: 1 } });
  });

  it('polls until complete, reporting progress', async () => {
    server.queue(
      'GET /crawl/c-1/status',
      json(200, status({})),
      json(200, status({})),
      json(200, status({ status: 'DONE', is_complete: true, is_success: true })),
    );
    const seen: string[] = [];
    const done = await client.wait('c-1', { pollInterval: 1500, onProgress: (s) => seen.push(s.status) });
    expect(done.status).toBe('DONE');
    expect(seen).toEqual(['RUNNING', 'RUNNING', 'DONE']);
    expect(sleeps).toEqual([1500, 1500]);
  });

  it.each([
    ['failed', { status: 'DONE', is_complete: true, is_success: false }, 'ERR::CRAWLER::FAILED'],
    ['cancelled', { status: 'CANCELLED', is_complete: true, is_success: false }, 'ERR::CRAWLER::CANCELLED'],
  ])('throws a CrawlerError naming a %s crawl', async (_name, end, code) => {
    server.queue('GET /crawl/c-1/status', json(200, status(end)));
    const error = (await rejection(client.wait('c-1'))) as CrawlerError;
    expect(isCrawlerError(error)).toBe(true);
    expect(error.uuid).toBe('c-1');
    expect(error.code).toBe(code);
  });

  it('throws a TimeoutError naming the crawl, and leaves it running', async () => {
    server.fallback('GET /crawl/c-1/status', json(200, status({})));
    const error = await rejection(client.wait('c-1', { pollInterval: 1000, timeout: 5000 }));
    expect(isTimeoutError(error)).toBe(true);
    expect((error as { uuid?: string }).uuid).toBe('c-1');
    expect(server.received.every((r) => r.path === '/crawl/c-1/status')).toBe(true);
  });

  it('polls a last time at the deadline, then gives up', async () => {
    server.fallback('GET /crawl/c-1/status', json(200, status({})));
    const error = await rejection(client.wait('c-1', { pollInterval: 2000, timeout: 5000 }));
    expect(isTimeoutError(error)).toBe(true);
    expect(sleeps).toEqual([2000, 2000, 1000]);
    expect(server.received).toHaveLength(4);
  });

  it('returns a crawl that completes at the deadline', async () => {
    server.queue(
      'GET /crawl/c-1/status',
      json(200, status({})),
      json(200, status({})),
      json(200, status({ status: 'DONE', is_complete: true, is_success: true })),
    );
    expect((await client.wait('c-1', { pollInterval: 3000, timeout: 5000 })).status).toBe('DONE');
    expect(sleeps).toEqual([3000, 2000]);
  });

  it('stops waiting when aborted', async () => {
    const controller = new AbortController();
    server.fallback('GET /crawl/c-1/status', (res) => {
      controller.abort();
      json(200, status({}))(res, {} as never);
    });
    const error = await rejection(client.wait('c-1', { signal: controller.signal }));
    expect((error as Error).name).toBe('AbortError');
  });
});

describe('urls, contents and artifacts', () => {
  const text =
    (body: string): Reply =>
    (res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(body);
    };

  it('pages through the text listing lazily, page after page, until an empty page', async () => {
    server.fallback('GET /crawl/c-1/urls', (res, req) =>
      text(
        { '1': 'https://a.test/a\nhttps://a.test/b\n', '2': 'https://a.test/c\n' }[req.query.get('page') ?? ''] ?? '',
      )(res, req),
    );
    const first: string[] = [];
    for await (const u of client.urls('c-1', { status: 'visited' })) {
      first.push(u.url);
      break;
    }
    expect(first).toEqual(['https://a.test/a']);
    expect(server.received).toHaveLength(1);
    expect(Object.fromEntries(server.received[0]?.query ?? [])).toEqual({
      key: KEY,
      status: 'visited',
      page: '1',
      per_page: '100',
    });
    const all = [];
    for await (const u of client.urls('c-1', { perPage: 2 })) all.push(u);
    expect(all).toEqual([
      { url: 'https://a.test/a', status: 'visited' },
      { url: 'https://a.test/b', status: 'visited' },
      { url: 'https://a.test/c', status: 'visited' },
    ]);
    expect(server.received.slice(1).map((r) => [r.query.get('page'), r.query.get('per_page')])).toEqual([
      ['1', '2'],
      ['2', '2'],
      ['3', '2'],
    ]);
  });

  it('splits failed and skipped lines at the last comma: a URL may hold commas, a reason none', async () => {
    server.queue(
      'GET /crawl/c-1/urls',
      text('https://a.test/x,y?q=1,2,http_404\r\nhttps://a.test/plain,robots_txt\n'),
      text(''),
    );
    const got = [];
    for await (const u of client.urls('c-1', { status: 'failed' })) got.push(u);
    expect(got).toEqual([
      { url: 'https://a.test/x,y?q=1,2', status: 'failed', reason: 'http_404' },
      { url: 'https://a.test/plain', status: 'failed', reason: 'robots_txt' },
    ]);
  });

  it('reads contents as the map of the live wire, following links.next with its own key only', async () => {
    const page = (n: number, next: string | null) =>
      json(200, {
        contents: { [`https://a.test/${n}`]: { markdown: `# ${n}`, text: null } },
        links: { crawled_urls: 'x', next, prev: null },
      });
    server.queue(
      'GET /crawl/c-1/contents',
      page(1, 'https://elsewhere.test/crawl/c-1/contents?formats=markdown,text&limit=1&offset=1'),
      page(2, null),
    );
    const pages = [];
    for await (const p of client.contents('c-1', { formats: ['markdown', 'text'], limit: 1 })) pages.push(p);
    expect(pages).toEqual([
      { url: 'https://a.test/1', content: { markdown: '# 1', text: null } },
      { url: 'https://a.test/2', content: { markdown: '# 2', text: null } },
    ]);
    expect(server.received.map((r) => Object.fromEntries(r.query))).toEqual([
      { formats: 'markdown,text', limit: '1', key: KEY },
      { formats: 'markdown,text', limit: '1', offset: '1', key: KEY },
    ]);
  });

  it('refuses unknown content formats, URL statuses and page sizes before asking', () => {
    const formats = ['markdown', 'pdf'] as unknown as ['markdown'];
    expect(() => client.contents('c-1', { formats })).toThrow(
      /`formats` entries must be html, markdown, text, clean_html \(got "pdf"\)/,
    );
    expect(() => client.contents('c-1', { formats: 'markdown' as unknown as ['markdown'] })).toThrow(
      /`formats` must be a list of html, markdown, text, clean_html \(got "markdown"\)/,
    );
    expect(() => client.urls('c-1', { status: 'gone' as 'visited' })).toThrow(
      /`status` must be visited, pending, failed, skipped/,
    );
    expect(() => client.urls('c-1', { perPage: Number.NaN })).toThrow(
      /`perPage` must be a whole number of URLs, from 1 to 1000 \(got NaN\)/,
    );
    expect(() => client.contents('c-1', { limit: 51 })).toThrow(
      /`limit` must be a whole number of pages, from 1 to 50 \(got 51\)/,
    );
    expect(server.received).toHaveLength(0);
  });

  it('stops with a ServiceError when the service gives the same page again', async () => {
    server.fallback('GET /crawl/c-1/urls', text('https://a.test/a\n'));
    const seen: string[] = [];
    const error = await rejection(
      (async () => {
        for await (const u of client.urls('c-1')) seen.push(u.url);
      })(),
    );
    expect(isServiceError(error)).toBe(true);
    expect((error as ServiceError).code).toBe('ERR::CRAWLER::BAD_RESPONSE');
    expect(seen).toEqual(['https://a.test/a']);
    expect(server.received).toHaveLength(2);
  });

  it('reads one page in plain mode, and gives null for a page the crawl did not keep', async () => {
    server.queue(
      'GET /crawl/c-1/contents',
      (res) => void res.writeHead(200, { 'content-type': 'text/markdown' }).end('# Hello'),
      json(404, {
        status: 'error',
        http_code: 404,
        reason: 'Not Found',
        error_id: 'e1',
        message: 'no',
        code: 'ERR::CRAWLER::CONTENT_NOT_FOUND',
      }),
      json(404, { message: 'no such crawl', code: 'ERR::CRAWLER::NOT_FOUND', http_status_code: 404 }),
    );
    expect(await client.read('c-1', 'https://a.test/', { format: 'markdown' })).toBe('# Hello');
    expect(Object.fromEntries(server.received[0]?.query ?? [])).toEqual({
      plain: 'true',
      url: 'https://a.test/',
      formats: 'markdown',
      key: KEY,
    });
    expect(await client.read('c-1', 'https://a.test/never', { format: 'markdown' })).toBeNull();
    expect(isCrawlerError(await rejection(client.read('c-1', 'https://a.test/', { format: 'text' })))).toBe(true);
  });

  it('reads a batch from multipart/related, asking html and clean_html apart (same content type)', async () => {
    const multipart =
      (parts: [string, string, string][]): Reply =>
      (res) => {
        const body = `${parts.map(([url, type, text]) => `--b0\r\nContent-Type: ${type}\r\nContent-Location: ${url}\r\n\r\n${text}\r\n`).join('')}--b0--\r\n`;
        res.writeHead(200, { 'content-type': 'multipart/related; boundary=b0' }).end(body);
      };
    server.queue(
      'POST /crawl/c-1/contents/batch',
      multipart([
        ['https://a.test/1', 'text/html; charset=utf-8', '<p>one\r\n</p>'],
        ['https://a.test/1', 'text/markdown', 'one'],
        ['https://a.test/2', 'text/html', '<p>two</p>'],
      ]),
      multipart([['https://a.test/1', 'text/html', '<p>clean one</p>']]),
    );
    const got = await client.contentsBatch('c-1', ['https://a.test/1', 'https://a.test/2', 'https://a.test/3'], {
      formats: ['html', 'markdown', 'clean_html'],
    });
    expect(got).toEqual({
      'https://a.test/1': { html: '<p>one\r\n</p>', markdown: 'one', clean_html: '<p>clean one</p>' },
      'https://a.test/2': { html: '<p>two</p>' },
    });
    expect(server.received.map((r) => [r.query.get('formats'), r.raw, r.headers['content-type']])).toEqual([
      ['html,markdown', 'https://a.test/1\nhttps://a.test/2\nhttps://a.test/3', 'text/plain'],
      ['clean_html', 'https://a.test/1\nhttps://a.test/2\nhttps://a.test/3', 'text/plain'],
    ]);
  });

  it('refuses a batch of no URL or more than 100 before asking', async () => {
    for (const urls of [[], Array.from({ length: 101 }, (_, i) => `https://a.test/${i}`)]) {
      const error = await rejection(client.contentsBatch('c-1', urls, { formats: ['html'] }));
      expect(isConfigError(error)).toBe(true);
      expect((error as Error).message).toContain(`\`urls\` must list 1 to 100 URLs (got ${urls.length})`);
    }
    expect(server.received).toHaveLength(0);
  });

  it('streams an artifact', async () => {
    const big = Buffer.alloc(3 << 20, 0x57);
    server.queue('GET /crawl/c-1/artifact', (res) => {
      res.writeHead(200, { 'content-type': 'application/warc', 'content-length': String(big.length) });
      res.write(big.subarray(0, 1 << 20));
      setTimeout(() => res.end(big.subarray(1 << 20)), 20);
    });
    const artifact = await client.artifact('c-1', { type: 'warc' });
    expect(artifact.contentType).toBe('application/warc');
    let size = 0;
    let chunks = 0;
    const reader = artifact.stream.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      size += r.value.length;
      chunks++;
    }
    expect(size).toBe(big.length);
    expect(chunks).toBeGreaterThan(1);
    expect(server.received[0]?.query.get('type')).toBe('warc');
  });
});

describe('search', () => {
  it('answers with the skipped crawls, which are not an error', async () => {
    server.queue(
      'POST /crawl/search',
      json(200, {
        query: 'pricing',
        mode: 'hybrid',
        limit: 5,
        results: [{ rank: 1, score: 2, crawler_uuid: 'c-1', url: 'https://a.test/', title: 'A', text: 'pricing' }],
        skipped: [{ crawler_uuid: 'c-2', reason: 'search_not_ready', status: 'BUILDING' }],
        cursor: 'next-1',
      }),
    );
    const res = await client.search({
      crawls: ['c-1', 'c-2'],
      query: 'pricing',
      limit: 5,
      mode: 'fts',
      filters: { host: 'a.test' },
    });
    expect(res.skipped).toEqual([{ crawler_uuid: 'c-2', reason: 'search_not_ready', status: 'BUILDING' }]);
    expect(res.results[0]).toMatchObject({
      rank: 1,
      crawler_uuid: 'c-1',
      url: 'https://a.test/',
      text: 'pricing',
      contents_url: null,
    });
    expect(res.cursor).toBe('next-1');
    expect(server.received[0]?.json).toEqual({
      crawl_ids: ['c-1', 'c-2'],
      query: 'pricing',
      limit: 5,
      mode: 'fts',
      filters: { host: 'a.test' },
    });
    expect(server.received[0]?.query.get('key')).toBe(KEY);
  });

  it.each(['SEARCH_NOT_ENABLED', 'SEARCH_NOT_READY', 'SEARCH_TOO_MANY_CRAWLS'])(
    'turns %s into a CrawlerError',
    async (code) => {
      server.queue(
        'POST /crawl/search',
        json(409, { message: 'no', code: `ERR::CRAWLER::${code}`, http_status_code: 409 }),
      );
      const error = (await rejection(client.search({ crawls: ['c-1'], query: 'q' }))) as CrawlerError;
      expect(isCrawlerError(error)).toBe(true);
      expect(error.code).toBe(`ERR::CRAWLER::${code}`);
    },
  );
});

describe('refresh and cancel', () => {
  it.each(['REFRESH_NOT_ENABLED', 'REFRESH_IN_PROGRESS', 'REFRESH_INTERVAL_INVALID'])(
    'turns %s into a CrawlerError',
    async (code) => {
      server.queue('POST /crawl/c-1/refresh', json(409, { message: 'no', code: `ERR::CRAWLER::${code}` }));
      const error = (await rejection(client.refresh('c-1'))) as CrawlerError;
      expect(error.code).toBe(`ERR::CRAWLER::${code}`);
      expect(isCrawlerError(error)).toBe(true);
    },
  );

  it('changes the refresh schedule with PATCH, sending only what is given, and reads the block back', async () => {
    server.queue(
      'PATCH /crawl/c-1/refresh',
      json(200, {
        enabled: true,
        interval_seconds: 7200,
        status: 'SCHEDULED',
        generation: 2,
        next_run_at: '2027-01-01T00:00:00Z',
      }),
    );
    expect(await client.updateRefresh('c-1', { refresh_interval: 7200 })).toEqual({
      enabled: true,
      interval_seconds: 7200,
      status: 'SCHEDULED',
      generation: 2,
      last_run_at: null,
      next_run_at: '2027-01-01T00:00:00Z',
      consecutive_failures: 0,
    });
    expect(server.received[0]?.json).toEqual({ refresh_interval: 7200 });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['nothing to change', {}, 'there is nothing to change'],
    [
      'an interval of one minute',
      { refresh_interval: 60 },
      '`refresh_interval` must be a whole number of seconds, from 3600 to 7776000 (got 60)',
    ],
    ['an interval that is NaN', { refresh_interval: Number.NaN }, '(got NaN)'],
    [
      'an interval while turning refresh off',
      { refresh: false, refresh_interval: 7200 },
      'leave it out when turning refresh off',
    ],
    ['a refresh flag that is not a boolean', { refresh: 'yes' }, '`refresh` must be true or false'],
  ])('refuses refresh settings with %s before asking', async (_name, settings, text) => {
    const error = await rejection(client.updateRefresh('c-1', settings));
    expect(isConfigError(error)).toBe(true);
    expect((error as Error).message).toContain(text);
    expect(server.received).toHaveLength(0);
  });

  it('reads the refresh block of a refresh run, at the top level or nested', async () => {
    server.queue(
      'POST /crawl/c-1/refresh',
      json(202, { crawler_uuid: 'c-1', enabled: true, interval_seconds: 3600, status: 'RUNNING', generation: 3 }),
      json(202, {
        crawler_uuid: 'c-1',
        refresh: { enabled: true, interval_seconds: 3600, status: 'RUNNING', generation: 4 },
      }),
    );
    expect(await client.refresh('c-1')).toMatchObject({ status: 'RUNNING', generation: 3 });
    expect(await client.refresh('c-1')).toMatchObject({ status: 'RUNNING', generation: 4 });
  });

  it('cancels', async () => {
    server.queue('POST /crawl/c-1/cancel', json(200, { status: 'CANCELLED' }));
    expect(await client.cancel('c-1')).toEqual({ status: 'CANCELLED' });
  });
});

describe('prompt', () => {
  const sse =
    (frames: string): Reply =>
    (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(frames);
    };

  it('streams JSON-string tokens until done, keeping the sources and the done frame, skipping comments', async () => {
    server.queue(
      'POST /crawl/prompt',
      sse(
        ': keep-alive\n\nevent: source\ndata: {"id":1,"crawler_uuid":"c-1","url":"https://a.test/","title":"A","score":0.5}\n\n' +
          'event: token\ndata: "Hello"\n\n: keep-alive\n\nevent: token\ndata: ", \\"world\\""\n\nevent: token\ndata: {"text":"!"}\n\n' +
          'event: done\ndata: {"sources_used":[1],"sources_dropped":0,"truncated":false}\n\n',
      ),
    );
    const stream = client.prompt({ crawls: ['c-1'], prompt: 'hi?', search: { limit: 4 } });
    const tokens: string[] = [];
    for await (const t of stream) tokens.push(t);
    expect(tokens).toEqual(['Hello', ', "world"', '!']);
    expect(stream.sources).toEqual([{ id: 1, crawler_uuid: 'c-1', url: 'https://a.test/', title: 'A', score: 0.5 }]);
    expect(stream.done).toEqual({ sources_used: [1], sources_dropped: 0, truncated: false });
    expect(server.received[0]?.json).toEqual({
      crawl_ids: ['c-1'],
      prompt: 'hi?',
      generation: { stream: true },
      search: { limit: 4 },
    });
  });

  it('is not asked again after a retryable-looking 503 the service does not mark retryable', async () => {
    server.queue(
      'POST /crawl/prompt',
      json(503, { message: 'busy', code: 'ERR::BUSY' }),
      sse('event: done\ndata: {}\n\n'),
    );
    await rejection(client.prompt({ crawls: ['c-1'], prompt: 'q' }).text());
    expect(server.received).toHaveLength(1);
  });

  it('rejects before any token when the service refuses', async () => {
    server.queue('POST /crawl/prompt', json(409, { message: 'not ready', code: 'ERR::CRAWLER::SEARCH_NOT_READY' }));
    const error = await rejection(client.prompt({ crawls: ['c-1'], prompt: 'q' }).text());
    expect(isCrawlerError(error)).toBe(true);
  });

  it('gives the tokens before an error frame, then throws its error', async () => {
    server.queue(
      'POST /crawl/prompt',
      sse(
        'event: token\ndata: {"text":"A"}\n\nevent: token\ndata: {"text":"B"}\n\nevent: error\ndata: {"message":"model failed","code":"ERR::CRAWLER::PROMPT_FAILED","http_status_code":500}\n\n',
      ),
    );
    const tokens: string[] = [];
    let error: unknown;
    try {
      for await (const t of client.prompt({ crawls: ['c-1'], prompt: 'q' })) tokens.push(t);
    } catch (e) {
      error = e;
    }
    expect(tokens).toEqual(['A', 'B']);
    expect((error as ServiceError).code).toBe('ERR::CRAWLER::PROMPT_FAILED');
  });

  it('throws when the stream ends without done', async () => {
    server.queue('POST /crawl/prompt', sse('event: token\ndata: {"text":"A"}\n\n'));
    expect(isConnectionError(await rejection(client.prompt({ crawls: ['c-1'], prompt: 'q' }).text()))).toBe(true);
  });

  it('gives the same tokens however the stream is split: CR, LF, CRLF and mid-character', async () => {
    const tokens = ['Grüße', ' 漢字', ' 🙂', ' done'];
    for (const eol of ['\n', '\r', '\r\n']) {
      const text = `${tokens.map((t) => `event: token${eol}data: ${JSON.stringify({ text: t })}${eol}${eol}`).join('')}event: done${eol}data: {}${eol}${eol}`;
      const bytes = Buffer.from(text);
      for (let cut = 1; cut < bytes.length; cut++) {
        server.queue('POST /crawl/prompt', async (res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(bytes.subarray(0, cut));
          await new Promise((r) => setTimeout(r, 1));
          res.end(bytes.subarray(cut));
        });
        const got: string[] = [];
        for await (const t of client.prompt({ crawls: ['c-1'], prompt: 'q' })) got.push(t);
        expect(got, `split at byte ${cut} with ${JSON.stringify(eol)}`).toEqual(tokens);
      }
    }
  }, 60_000);

  it('aborts the request when the loop is left early', async () => {
    let closed = false;
    server.queue('POST /crawl/prompt', (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: token\ndata: {"text":"first"}\n\n');
      res.on('close', () => {
        closed = true;
      });
    });
    for await (const t of client.prompt({ crawls: ['c-1'], prompt: 'q' })) {
      expect(t).toBe('first');
      break;
    }
    for (let i = 0; i < 100 && !closed; i++) await new Promise((r) => setTimeout(r, 10));
    expect(closed).toBe(true);
  });

  it('aborts mid-stream when the caller aborts', async () => {
    const controller = new AbortController();
    server.queue('POST /crawl/prompt', (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: token\ndata: {"text":"first"}\n\n');
    });
    const tokens: string[] = [];
    const error = await rejection(
      (async () => {
        for await (const t of client.prompt({ crawls: ['c-1'], prompt: 'q' }, { signal: controller.signal })) {
          tokens.push(t);
          controller.abort();
        }
      })(),
    );
    expect(tokens).toEqual(['first']);
    expect((error as Error).name).toBe('AbortError');
  });
});

describe('client options', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['a NaN timeout', { timeout: Number.NaN }, '`timeout` must be a whole number of milliseconds'],
    [
      'a negative maxRetries',
      { maxRetries: -1 },
      '`maxRetries` must be a whole number of retries, from 0 to 10 (got -1)',
    ],
    ['an infinite maxRetries', { maxRetries: Number.POSITIVE_INFINITY }, '(got Infinity)'],
  ])('refuses %s', (_name, options, text) => {
    expect(() => new CrawlerClient({ key: KEY, baseUrl: server.url, ...options })).toThrow(text);
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'a NaN poll interval',
      { pollInterval: Number.NaN },
      '`pollInterval` must be a whole number of milliseconds, from 1 to 3600000 (got NaN)',
    ],
    ['a zero poll interval', { pollInterval: 0 }, '(got 0)'],
    ['a negative timeout', { timeout: -1 }, '`timeout` must be a whole number of milliseconds, at least 0 (got -1)'],
  ])('refuses to wait with %s, before asking', async (_name, options, text) => {
    const error = await rejection(client.wait('c-1', options));
    expect((error as Error).message).toContain(text);
    expect(server.received).toHaveLength(0);
  });

  it('draws the backoff jitter from the injected random source', async () => {
    for (const [random, expected] of [
      [0, [250, 500, 1000]],
      [0.5, [375, 750, 1500]],
    ] as const) {
      sleeps = [];
      server.queue(
        'GET /crawl/c-1/status',
        ...Array.from({ length: 3 }, () => json(503, { message: 'x', code: 'ERR::X' })),
        json(200, status({})),
      );
      const c = new CrawlerClient({ key: KEY, baseUrl: server.url, clock, random: () => random });
      await c.status('c-1');
      expect(sleeps).toEqual(expected);
    }
  });

  it('takes the key and base URL from the environment, and refuses to run without them', () => {
    process.env.CLOUD_API_KEY = 'env-key-99999';
    process.env.CLOUD_API_URL = server.url;
    try {
      expect(new CrawlerClient().baseUrl).toBe(server.url);
    } finally {
      delete process.env.CLOUD_API_KEY;
      delete process.env.CLOUD_API_URL;
    }
    expect(() => new CrawlerClient()).toThrow(/`key` is required/);
  });
});

describe('timeouts', () => {
  // The client's `timeout` is real time; the sleeps between retries stay on the test's clock.
  const timed = (ms: number) => new CrawlerClient({ key: KEY, baseUrl: server.url, clock, timeout: ms, maxRetries: 0 });
  const drip =
    (chunks: string[], gap: number, type: string): Reply =>
    (res) => {
      res.writeHead(200, { 'content-type': type });
      let i = 0;
      const next = () => {
        if (i === chunks.length) return void res.end();
        res.write(chunks[i++]);
        setTimeout(next, gap);
      };
      next();
    };
  const readAll = async (stream: ReadableStream<Uint8Array>) => {
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk);
    return text;
  };

  it('lets an artifact download take longer than the timeout while data keeps coming', async () => {
    const parts = Array.from({ length: 8 }, (_, i) => `record-${i};`);
    server.queue('GET /crawl/c-1/artifact', drip(parts, 80, 'application/warc'));
    const artifact = await timed(250).artifact('c-1', { type: 'warc' });
    expect(await readAll(artifact.stream)).toBe(parts.join(''));
  });

  it('lets a prompt answer stream longer than the timeout while tokens keep coming', async () => {
    const frames = Array.from({ length: 6 }, (_, i) => `event: token\ndata: {"text":"t${i} "}\n\n`);
    server.queue('POST /crawl/prompt', drip([...frames, 'event: done\ndata: {}\n\n'], 80, 'text/event-stream'));
    expect(
      await timed(250)
        .prompt({ crawls: ['c-1'], prompt: 'q' })
        .text(),
    ).toBe('t0 t1 t2 t3 t4 t5 ');
  });

  it('fails a stream that goes quiet with a TimeoutError naming the call, not the key', async () => {
    let closed = false;
    server.queue('GET /crawl/c-1/artifact', (res) => {
      res.writeHead(200, { 'content-type': 'application/warc' }).write('first');
      res.on('close', () => {
        closed = true;
      });
    });
    const artifact = await timed(200).artifact('c-1', { type: 'warc' });
    const error = await rejection(readAll(artifact.stream));
    expect(isTimeoutError(error)).toBe(true);
    expect((error as Error).message).toContain('GET /crawl/c-1/artifact sent nothing within 200 ms');
    expect(inspect(error, { depth: 10 })).not.toContain(KEY);
    for (let i = 0; i < 100 && !closed; i++) await new Promise((r) => setTimeout(r, 10));
    expect(closed).toBe(true);
  });

  it('fails a prompt that goes quiet after a token with a TimeoutError, after that token', async () => {
    server.queue('POST /crawl/prompt', (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write('event: token\ndata: {"text":"A"}\n\n');
    });
    const tokens: string[] = [];
    const error = await rejection(
      (async () => {
        for await (const t of timed(200).prompt({ crawls: ['c-1'], prompt: 'q' })) tokens.push(t);
      })(),
    );
    expect(tokens).toEqual(['A']);
    expect(isTimeoutError(error)).toBe(true);
  });

  it('times a JSON answer until its body is whole', async () => {
    server.queue('GET /crawl/c-1/status', (res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).write('{"uuid":');
    });
    const error = await rejection(timed(200).status('c-1'));
    expect(isTimeoutError(error)).toBe(true);
    expect((error as Error).message).toContain('GET /crawl/c-1/status did not answer within 200 ms');
  });

  it('leaves no listener on the caller’s signal once calls are over', async () => {
    server.fallback('GET /crawl/c-1/status', json(200, status({})));
    server.fallback('GET /crawl/c-1/artifact', drip(['a', 'b'], 5, 'application/warc'));
    const controller = new AbortController();
    for (let i = 0; i < 20; i++) await client.status('c-1', { signal: controller.signal });
    for (let i = 0; i < 5; i++) {
      const artifact = await client.artifact('c-1', { type: 'warc', signal: controller.signal });
      expect(await readAll(artifact.stream)).toBe('ab');
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
