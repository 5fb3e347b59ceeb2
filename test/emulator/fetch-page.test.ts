/** The emulated crawler's page fetch against a real loopback server: what `fetch` would give. */
import { getEventListeners, once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FetchFailure,
  type GetOptions,
  PageFetcher,
  RedirectRefused,
} from '../../packages/emulator/src/crawler/fetch-page.js';
import { rejection } from '../support/rejection.js';

const MB = 1024 * 1024;
// 64 MB of zeros in about 64 KB: a gzip bomb for a 1 MB limit.
const BOMB = gzipSync(Buffer.alloc(64 * MB), { level: 9 });
const TEXT = `<!doctype html><title>ünïcode</title>${'<p>body text</p>'.repeat(200)}`;
let server: Server;
let origin: string;
let connections = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const send = (headers: Record<string, string | string[]>, body: Buffer | string) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(body);
    };
    if (path === '/plain') return send({ 'set-cookie': ['a=1', 'b=2'] }, TEXT);
    if (path === '/gzip') return send({ 'content-encoding': 'gzip' }, gzipSync(TEXT));
    if (path === '/deflate') return send({ 'content-encoding': 'deflate' }, deflateSync(TEXT));
    if (path === '/br') return send({ 'content-encoding': 'br' }, brotliCompressSync(TEXT));
    if (path === '/stacked') return send({ 'content-encoding': 'gzip, br' }, brotliCompressSync(gzipSync(TEXT)));
    if (path === '/broken-gzip') return send({ 'content-encoding': 'gzip' }, gzipSync(TEXT).subarray(0, 40));
    if (path === '/hop1') return void res.writeHead(301, { location: '/hop2' }).end();
    if (path === '/hop2') return void res.writeHead(307, { location: `${origin}/plain?via=hop2` }).end();
    if (path === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
    if (path === '/missing') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('nope');
    if (path === '/headers') return send({}, JSON.stringify(req.headers));
    if (path === '/big-declared') return void res.writeHead(200, { 'content-length': String(50 * MB) }).end();
    if (path === '/big-chunked') {
      // No Content-Length: the limit is found while the body streams.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      let sent = 0;
      const more = () => {
        while (sent < 50 * MB) {
          sent += MB;
          if (!res.write(Buffer.alloc(MB, 7))) return void res.once('drain', more);
        }
        res.end();
      };
      return more();
    }
    if (path === '/bomb') return send({ 'content-encoding': 'gzip' }, BOMB);
    if (path.startsWith('/chain/')) {
      const n = Number(path.slice(7));
      return void res.writeHead(302, { location: `/chain/${n + 1}` }).end();
    }
    if (path === '/away') return void res.writeHead(302, { location: 'http://127.0.0.2:9/secret' }).end();
    if (path === '/stall') {
      res.writeHead(200, { 'content-type': 'text/html' }).write('<p>first');
      return;
    }
    res.writeHead(500).end();
  });
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const options = (extra: Partial<GetOptions> = {}): GetOptions => ({
  headers: {},
  signal: new AbortController().signal,
  timeout: 10_000,
  maxBytes: 1024 * 1024,
  ...extra,
});

describe('PageFetcher', () => {
  it.each(['plain', 'gzip', 'deflate', 'br', 'stacked'])('gives the text of a %s body', async (path) => {
    const fetcher = new PageFetcher(2);
    try {
      const page = await fetcher.get(`${origin}/${path}`, options());
      expect(page).toMatchObject({ status: 200, ok: true });
      expect(page.body.toString('utf8')).toBe(TEXT);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    } finally {
      fetcher.close();
    }
  });

  it('joins repeated headers and sends the crawl headers', async () => {
    const fetcher = new PageFetcher(2);
    try {
      expect((await fetcher.get(`${origin}/plain`, options())).headers['set-cookie']).toBe('a=1, b=2');
      const sent = JSON.parse(
        (
          await fetcher.get(`${origin}/headers`, options({ headers: { 'user-agent': 'crawler/1', 'x-token': 't' } }))
        ).body.toString(),
      );
      expect(sent).toMatchObject({ 'user-agent': 'crawler/1', 'x-token': 't' });
    } finally {
      fetcher.close();
    }
  });

  it('follows redirects, relative and absolute, and says where it landed', async () => {
    const fetcher = new PageFetcher(2);
    try {
      const page = await fetcher.get(`${origin}/hop1`, options());
      expect(page).toMatchObject({ status: 200, url: `${origin}/plain?via=hop2` });
      expect(page.redirects).toEqual([`${origin}/hop1`, `${origin}/hop2`]);
      expect(page.body.toString()).toBe(TEXT);
      const loop = await rejection(fetcher.get(`${origin}/loop`, options()));
      expect(loop).toBeInstanceOf(FetchFailure);
      expect(loop).toMatchObject({ reason: 'redirect_loop' });
    } finally {
      fetcher.close();
    }
  });

  it('refuses a body over the limit: by its Content-Length, while it streams, and after decoding a bomb', async () => {
    const fetcher = new PageFetcher(2);
    try {
      for (const path of ['big-declared', 'big-chunked', 'bomb']) {
        const failure = await rejection(fetcher.get(`${origin}/${path}`, options()));
        expect(failure).toBeInstanceOf(FetchFailure);
        expect(failure).toMatchObject({ reason: 'too_large' });
        expect((failure as Error).message).toMatch(/over the crawler's limit of 1 MB/);
      }
      expect(BOMB.length).toBeLessThan(MB);
      // The connection pool still serves.
      expect((await fetcher.get(`${origin}/plain`, options())).body.toString()).toBe(TEXT);
    } finally {
      fetcher.close();
    }
  });

  it('asks before each redirect and stops a chain after ten', async () => {
    const fetcher = new PageFetcher(2);
    const asked: string[] = [];
    try {
      const refused = await rejection(
        fetcher.get(
          `${origin}/away`,
          options({
            follow: (url) => {
              asked.push(url.href);
              return url.hostname === '127.0.0.1' ? undefined : 'external_link';
            },
          }),
        ),
      );
      expect(refused).toBeInstanceOf(RedirectRefused);
      expect(refused).toMatchObject({
        from: `${origin}/away`,
        to: 'http://127.0.0.2:9/secret',
        reason: 'external_link',
      });
      expect(asked).toEqual(['http://127.0.0.2:9/secret']);
      const chain = await rejection(fetcher.get(`${origin}/chain/0`, options()));
      expect(chain).toMatchObject({ reason: 'too_many_redirects', message: 'more than 10 redirects' });
    } finally {
      fetcher.close();
    }
  });

  it('gives an error status as a page that is not ok', async () => {
    const fetcher = new PageFetcher(2);
    try {
      const page = await fetcher.get(`${origin}/missing`, options());
      expect(page).toMatchObject({ status: 404, ok: false });
      expect(page.body.toString()).toBe('nope');
    } finally {
      fetcher.close();
    }
  });

  it('fails on a truncated compressed body, a stall past the timeout and an abort mid-body', async () => {
    const fetcher = new PageFetcher(2);
    try {
      expect(await rejection(fetcher.get(`${origin}/broken-gzip`, options()))).toBeInstanceOf(Error);
      expect(((await rejection(fetcher.get(`${origin}/stall`, options({ timeout: 200 })))) as Error).message).toBe(
        'no answer within 200 ms',
      );
      const controller = new AbortController();
      const pending = fetcher.get(`${origin}/stall`, options({ signal: controller.signal }));
      setTimeout(() => controller.abort(new Error('crawl cancelled')), 50);
      expect(((await rejection(pending)) as Error).message).toBe('crawl cancelled');
      // The page's listener on the crawl's signal is gone with the page.
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    } finally {
      fetcher.close();
    }
  });

  it('keeps connections alive between requests', async () => {
    const fetcher = new PageFetcher(1);
    const before = connections;
    try {
      for (let i = 0; i < 10; i++) await fetcher.get(`${origin}/plain`, options());
      expect(connections - before).toBe(1);
    } finally {
      fetcher.close();
    }
  });
});
