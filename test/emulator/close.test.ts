/**
 * `close()` stops every part of the emulator, in reverse order of their start: once it has
 * resolved, a running crawl fetches nothing more and a queued webhook delivery never goes out.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { CrawlerClient } from '../../packages/cloud-browser/src/crawler/index.js';
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
    await eventually(
      () => [site.requests(), receiver.requests()],
      ([pages, deliveries]) => (pages ?? 0) >= 3 && (deliveries ?? 0) >= 1,
    );
    await emulator.close();
    const after = [site.requests(), receiver.requests()];
    await sleep(2000);
    expect([site.requests(), receiver.requests()]).toEqual(after);
  }, 30_000);
});
