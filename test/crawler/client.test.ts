import { getEventListeners } from 'node:events';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Clock, CrawlerClient, toCrawlRequest } from '../../src/crawler/index.js';
import {
  type CrawlerError,
  isConnectionError,
  isCrawlerError,
  isServiceError,
  isTimeoutError,
  type ServiceError,
} from '../../src/index.js';
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
  it('sends a multipart form: config as JSON, urls one per line, the key in the query only', async () => {
    server.queue('POST /crawl', json(200, { uuid: 'c-1' }));
    const config = {
      url_list: ['https://a.test/x', 'https://b.test/é'],
      page_limit: 10,
      unblocker: true,
      respect_robots_txt: false,
    };
    expect(await client.start(config)).toEqual({ uuid: 'c-1' });
    const [req] = server.received;
    expect(req?.query.get('key')).toBe(KEY);
    expect(JSON.parse(req?.parts.config?.text ?? '')).toEqual(toCrawlRequest(config).config);
    expect(req?.parts.config?.contentType).toBe('application/json');
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

  it('sends no urls part without url_list', async () => {
    server.queue('POST /crawl', json(200, { uuid: 'c-2' }));
    await client.start({ url: 'https://a.test/' });
    expect(Object.keys(server.received[0]?.parts ?? {})).toEqual(['config']);
  });

  it('accepts crawler_uuid as the id', async () => {
    server.queue('POST /crawl', json(200, { crawler_uuid: 'c-3', extra: 1 }));
    expect(await client.start({ url: 'https://a.test/' })).toMatchObject({ uuid: 'c-3', extra: 1 });
  });

  it('uses the key of the config, when given, in the query and nowhere else', async () => {
    server.queue('POST /crawl', json(200, { uuid: 'c-4' }));
    await client.start({ url: 'https://a.test/', key: 'other-key-777777' });
    expect(server.received[0]?.query.get('key')).toBe('other-key-777777');
    expect(server.received[0]?.parts.config?.text).not.toContain('other-key');
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
  it('pages through urls lazily, following the cursor', async () => {
    server.fallback('GET /crawl/c-1/urls', (res, req) =>
      req.query.get('cursor') === 'p2'
        ? json(200, { urls: [{ url: 'c', status: 'visited' }], next_cursor: null })(res, req)
        : json(200, {
            urls: [
              { url: 'a', status: 'visited' },
              { url: 'b', status: 'visited' },
            ],
            next_cursor: 'p2',
          })(res, req),
    );
    const first: string[] = [];
    for await (const u of client.urls('c-1', { status: 'visited' })) {
      first.push(u.url);
      break;
    }
    expect(first).toEqual(['a']);
    expect(server.received).toHaveLength(1);
    expect(server.received[0]?.query.get('status')).toBe('visited');
    const all: string[] = [];
    for await (const u of client.urls('c-1')) all.push(u.url);
    expect(all).toEqual(['a', 'b', 'c']);
    expect(server.received).toHaveLength(3);
    expect(server.received.at(-1)?.query.get('cursor')).toBe('p2');
  });

  it('asks contents in the given formats', async () => {
    server.queue('GET /crawl/c-1/contents', json(200, { contents: [{ url: 'a', content: { markdown: '# A' } }] }));
    const pages = [];
    for await (const p of client.contents('c-1', { formats: ['markdown', 'text'], url: 'https://a.test/' }))
      pages.push(p);
    expect(pages).toEqual([{ url: 'a', content: { markdown: '# A' } }]);
    expect(server.received[0]?.query.get('formats')).toBe('markdown,text');
    expect(server.received[0]?.query.get('url')).toBe('https://a.test/');
  });

  it('refuses unknown content formats and URL statuses before asking', () => {
    const formats = ['markdown', 'pdf'] as unknown as ['markdown'];
    expect(() => client.contents('c-1', { formats })).toThrow(
      /`formats` entries must be html, markdown, text, clean_html \(got "pdf"\)/,
    );
    expect(() => client.contents('c-1', { formats: 'markdown' as unknown as ['markdown'] })).toThrow(
      /`formats` must be a list of html, markdown, text, clean_html \(got "markdown"\)/,
    );
    expect(() => client.urls('c-1', { status: 'gone' as 'visited' })).toThrow(
      /`status` must be visited, failed, skipped/,
    );
    expect(server.received).toHaveLength(0);
  });

  it('stops with a ServiceError when the service repeats a page cursor', async () => {
    server.fallback('GET /crawl/c-1/urls', json(200, { urls: [{ url: 'a', status: 'visited' }], next_cursor: 'p2' }));
    const seen: string[] = [];
    const error = await rejection(
      (async () => {
        for await (const u of client.urls('c-1')) seen.push(u.url);
      })(),
    );
    expect(isServiceError(error)).toBe(true);
    expect((error as ServiceError).code).toBe('ERR::CRAWLER::BAD_RESPONSE');
    expect(seen).toEqual(['a', 'a']);
    expect(server.received).toHaveLength(2);
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
        results: [{ crawl: 'c-1', url: 'a', score: 2 }],
        skipped: [{ crawl: 'c-2', reason: 'SEARCH_NOT_READY' }],
      }),
    );
    const res = await client.search({ crawls: ['c-1', 'c-2'], query: 'pricing' });
    expect(res.skipped).toEqual([{ crawl: 'c-2', reason: 'SEARCH_NOT_READY' }]);
    expect(server.received[0]?.json).toEqual({ crawls: ['c-1', 'c-2'], query: 'pricing' });
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

  it('streams tokens until done', async () => {
    server.queue(
      'POST /crawl/prompt',
      sse(
        'event: token\ndata: {"text":"Hello"}\n\nevent: token\ndata: {"text":", world"}\n\nevent: done\ndata: {}\n\n',
      ),
    );
    const tokens: string[] = [];
    for await (const t of client.prompt({ crawls: ['c-1'], prompt: 'hi?' })) tokens.push(t);
    expect(tokens).toEqual(['Hello', ', world']);
    expect(server.received[0]?.json).toEqual({ crawls: ['c-1'], prompt: 'hi?' });
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
