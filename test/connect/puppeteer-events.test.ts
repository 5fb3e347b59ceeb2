/**
 * Puppeteer through our transport loses nothing a page sends while it loads: an exposed
 * function called from an inline script during load is answered on every one of 200 loads, and
 * every console message arrives (the issue saw 9 of 30 unanswered and 12 of 120 messages lost
 * when several CDP messages were handed over in one tick).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectPuppeteer } from '../../packages/cloud-browser/src/connect/puppeteer.js';
import type { CloudBrowserSession } from '../../packages/cloud-browser/src/connect/session.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';

const LOADS = 200;
let emulator: Emulator;
let site: Server;
let origin = '';
let session: CloudBrowserSession<Browser>;

beforeAll(async () => {
  site = createServer((req, res) => {
    const n = new URL(req.url ?? '/', 'http://x').searchParams.get('n');
    res.writeHead(200, { 'content-type': 'text/html' }).end(
      `<title>load ${n}</title><script>
        console.log('early ${n}');
        window.answered = window.report(${n}).then((v) => { document.title = 'answered ' + v; });
        console.log('late ${n}');
      </script>`,
    );
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  emulator = await startEmulator();
  session = await connectPuppeteer(puppeteer, { browser_url: emulator.browserUrl, api_key: emulator.apiKey });
}, 60_000);

afterAll(async () => {
  await session?.close();
  await emulator?.close();
  site?.close();
});

it(`answers an exposed function called during load on all ${LOADS} loads, and loses no console message`, async () => {
  const page = await session.browser.newPage();
  const reported: number[] = [];
  const messages: string[] = [];
  await page.exposeFunction('report', (n: number) => {
    reported.push(n);
    return n * 2;
  });
  page.on('console', (m) => messages.push(m.text()));
  const unanswered: number[] = [];
  for (let n = 0; n < LOADS; n++) {
    await page.goto(`${origin}/?n=${n}`);
    const answered = await page
      .waitForFunction((want: string) => document.title === want, { timeout: 5000 }, `answered ${n * 2}`)
      .then(() => true)
      .catch(() => false);
    if (!answered) unanswered.push(n);
  }
  expect(unanswered).toEqual([]);
  expect(reported).toEqual(Array.from({ length: LOADS }, (_, n) => n));
  const expected = Array.from({ length: LOADS }, (_, n) => [`early ${n}`, `late ${n}`]).flat();
  expect(messages.filter((m) => /^(early|late) \d+$/.test(m))).toEqual(expected);
}, 180_000);
