/**
 * The emulator's dashboard, driven by Playwright in a real Chromium: a live session with its
 * live view (picture and clicks), a finished debug run's video, a crawl's progress.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudBrowserApi } from '../../packages/cloud-browser/src/api/index.js';
import { connectPlaywright } from '../../packages/cloud-browser/src/connect/playwright.js';
import { CrawlerClient } from '../../packages/cloud-browser/src/crawler/index.js';
import { findChromium } from '../../packages/emulator/src/chromium.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { type CrawlSite, startCrawlSite } from '../support/crawl-site.js';

// Orange everywhere, and a button in the top left corner that says when it was clicked.
const PAGE = `<!doctype html><title>remote</title><style>html,body{margin:0;height:100%;background:rgb(250,140,0)}
#b{position:absolute;left:0;top:0;width:200px;height:100px}</style>
<button id="b" onclick="document.title='clicked'">click</button>`;

let emulator: Emulator;
let site: Server;
let siteUrl: string;
let crawlSite: CrawlSite;
let browser: Browser;
let dashboard: Page;

beforeAll(async () => {
  emulator = await startEmulator({ vncPort: 0 });
  site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  site.listen(0, '127.0.0.1');
  await once(site, 'listening');
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  crawlSite = await startCrawlSite();
  browser = await chromium.launch({ executablePath: await findChromium(), args: ['--no-sandbox'] });
  dashboard = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
});
afterAll(async () => {
  await browser?.close();
  await emulator?.close();
  await crawlSite?.close();
  site?.close();
});

async function remote(options: Record<string, unknown> = {}) {
  const session = await connectPlaywright(chromium, {
    browser_url: emulator.browserUrl,
    api_key: emulator.apiKey,
    resolution: '800x450',
    ...options,
  });
  const page = await (session.browser.contexts()[0] ?? (await session.browser.newContext())).newPage();
  await page.goto(siteUrl);
  return { session, page };
}

describe('the dashboard', () => {
  it('asks for the key, then trades it for a cookie and takes it out of the address bar', async () => {
    const anonymous = await browser.newPage();
    try {
      const refused = await anonymous.goto(emulator.apiUrl);
      expect(refused?.status()).toBe(401);
      expect(await anonymous.textContent('h2')).toBe('Sign in');
      expect((await anonymous.request.get(`${emulator.apiUrl}/emulator/dashboard/state`)).status()).toBe(401);
      await anonymous.goto(`${emulator.apiUrl}/?key=not-the-key`);
      expect(await anonymous.textContent('main')).toContain('That is not the emulator’s key.');
    } finally {
      await anonymous.close();
    }
    const opened = await dashboard.goto(emulator.dashboardUrl);
    expect(opened?.status()).toBe(200);
    expect(dashboard.url()).toBe(`${emulator.apiUrl}/`);
    const cookies = await dashboard.context().cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([['cloud_browser_dashboard', true, 'Strict']]);
    expect(JSON.stringify(cookies)).not.toContain(emulator.apiKey);
  });

  it('shows a live session, its picture in the live view, and passes a click to it', async () => {
    const { session, page } = await remote({ session: 'watched', vnc_password: 'hidden-pass-1', enable_vnc: true });
    try {
      await dashboard.goto(`${emulator.apiUrl}/`);
      const row = dashboard.locator('#sessions tr', { hasText: session.runId as string });
      await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
      expect(await row.textContent()).toContain('watched');
      // Secrets are redacted in the options shown.
      expect(await dashboard.textContent('#sessions')).not.toContain('hidden-pass-1');
      await expect
        .poll(() => row.locator('img.thumb').evaluate((img: HTMLImageElement) => img.naturalWidth), { timeout: 10_000 })
        .toBeGreaterThan(0);

      await row.locator('button[data-view]').click();
      const canvas = dashboard.locator('#screen');
      await expect
        .poll(() => canvas.evaluate((c: HTMLCanvasElement) => Number(c.dataset.frames ?? 0)), { timeout: 10_000 })
        .toBeGreaterThan(0);
      const pixel = await canvas.evaluate((c: HTMLCanvasElement) => [
        c.width,
        c.height,
        ...Array.from((c.getContext('2d') as CanvasRenderingContext2D).getImageData(600, 300, 1, 1).data.slice(0, 3)),
      ]);
      expect(pixel.slice(0, 2)).toEqual([800, 450]);
      const [r, g, b] = pixel.slice(2) as [number, number, number];
      expect(Math.abs(r - 250) + Math.abs(g - 140) + Math.abs(b - 0)).toBeLessThan(50);

      // A click on the button, where the canvas shows it.
      const box = (await canvas.boundingBox()) as { x: number; y: number; width: number; height: number };
      await dashboard.mouse.click(box.x + (100 * box.width) / 800, box.y + (50 * box.height) / 450);
      await expect.poll(() => page.title(), { timeout: 10_000 }).toBe('clicked');
    } finally {
      await session.close();
    }
  });

  it('plays a finished debug run’s recording', async () => {
    const { session } = await remote({ debug: true });
    await new Promise((r) => setTimeout(r, 1500));
    await session.close();
    const api = new CloudBrowserApi({ browserUrl: emulator.browserUrl, key: emulator.apiKey });
    expect((await api.runs.waitForPlayback(session.runId as string, { timeout: 60_000 })).status).toBe('ready');
    await dashboard.goto(`${emulator.apiUrl}/`);
    const video = dashboard.locator(`video[data-run="${session.runId}"]`);
    await expect.poll(() => video.count(), { timeout: 10_000 }).toBe(1);
    const played = await video.evaluate(async (v: HTMLVideoElement) => {
      await v.play();
      await new Promise((r) => setTimeout(r, 700));
      return { time: v.currentTime, width: v.videoWidth, height: v.videoHeight, duration: v.duration };
    });
    expect(played.time).toBeGreaterThan(0);
    expect([played.width, played.height]).toEqual([800, 450]);
    expect(played.duration).toBeGreaterThan(0.3);
  });

  it('follows a crawl to 100 %', async () => {
    const crawler = new CrawlerClient({ key: emulator.apiKey, baseUrl: emulator.apiUrl });
    const { uuid } = await crawler.start({ url: `${crawlSite.origin}/`, page_limit: 8 });
    await dashboard.goto(`${emulator.apiUrl}/`);
    const row = dashboard.locator('#crawls tr', { hasText: uuid });
    await expect.poll(() => row.locator('.progress').textContent(), { timeout: 30_000 }).toBe('100 %');
    expect(await row.textContent()).toContain('DONE');
  });
});
