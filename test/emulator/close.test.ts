/**
 * `close()` stops every part of the emulator, in reverse order of their start: once it has
 * resolved, a running crawl fetches nothing more and a queued webhook delivery never goes out.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CrawlerClient } from '../../packages/cloud-browser/src/crawler/index.js';
import { buildBrowserUrl } from '../../packages/cloud-browser/src/index.js';
import { startEmulator } from '../../packages/emulator/src/index.js';
import { eventually } from '../support/drivers.js';
import { listenLoopback } from '../support/loopback.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A server on loopback that counts its requests and answers each with `answer`. */
async function counting(answer: (req: IncomingMessage, res: ServerResponse, n: number) => void) {
  let requests = 0;
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    requests++;
    open.add(res);
    res.on('close', () => open.delete(res));
    answer(req, res, requests);
  });
  const loopback = await listenLoopback(server);
  closers.push(async () => {
    for (const res of open) res.destroy();
    await loopback.close();
  });
  return { url: `http://127.0.0.1:${loopback.port}`, requests: () => requests };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the emulator's close()", () => {
  it('leaves no crawl fetching and no webhook delivery going out once it has resolved', async () => {
    // A slow site without end: each page takes 200 ms and links to two pages more.
    const site = await counting((req, res) => {
      const n = Number(/\d+/.exec(req.url ?? '')?.[0] ?? 0);
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<title>${n}</title><a href="/p${2 * n + 1}">a</a> <a href="/p${2 * n + 2}">b</a>`);
      }, 200);
    });
    // A receiver that holds its first request (the ping) for 1.5 s, so the crawl's events queue behind it.
    const receiver = await counting((_req, res, n) => setTimeout(() => res.writeHead(200).end(), n === 1 ? 1500 : 0));
    const emulator = await startEmulator({
      warmBrowsers: 0,
      webhooks: { hook: { url: `${receiver.url}/hook`, secret: 'close-test-secret-0123456789' } },
    });
    closers.push(() => emulator.close());
    const client = new CrawlerClient({ key: emulator.apiKey, baseUrl: emulator.apiUrl });
    await client.start({ url: `${site.url}/p0`, page_limit: 0, max_concurrency: 2, webhook_name: 'hook' });
    const [pages = 0, deliveries = 0] = await eventually(
      () => [site.requests(), receiver.requests()],
      ([p = 0, d = 0]) => p >= 3 && d >= 1,
    );
    // The crawl and the deliveries were under way when close() was called.
    expect([pages >= 3, deliveries >= 1]).toEqual([true, true]);
    await emulator.close();
    const after = [site.requests(), receiver.requests()];
    await sleep(2000);
    expect([site.requests(), receiver.requests()]).toEqual(after);
  }, 30_000);

  it("tells a session's client that the emulator is going away (1001) before it cuts the connections", async () => {
    const emulator = await startEmulator({ warmBrowsers: 0 });
    closers.push(() => emulator.close());
    const socket = new WebSocket(buildBrowserUrl({ browser_url: emulator.browserUrl, api_key: emulator.apiKey }));
    await once(socket, 'open');
    const closed = once(socket, 'close') as Promise<[number, Buffer]>;
    await emulator.close();
    const [code, reason] = await closed;
    expect([code, reason.toString()]).toEqual([1001, 'the emulator is shutting down']);
  }, 30_000);
});
