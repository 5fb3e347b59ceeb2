/**
 * Against the emulator, in one run, each the median of paired rounds (alternating which side
 * goes first): (a) connect-to-first-navigation through our connectors vs the bare library on
 * the same URL, 20 rounds; (b) a full-page 1920x5000 screenshot through our connection vs bare,
 * 20 rounds. Playwright and Puppeteer alike.
 * Goals: (a) ratio at most 1.10, (b) at most 1.05.
 * (c) Time to a connected session: our connector to the emulator (a session with no launch
 * flag, served by its warm pool) vs launching Chromium yourself (`chromium.launch()`,
 * `puppeteer.launch()`, the same executable), median of 15 paired rounds. Goal at most 0.7.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { connectPlaywright } from '../packages/cloud-browser/src/connect/playwright.js';
import { connectPuppeteer } from '../packages/cloud-browser/src/connect/puppeteer.js';
import { buildBrowserUrl } from '../packages/cloud-browser/src/index.js';
import { findChromium, startEmulator } from '../packages/emulator/src/index.js';
import { median, pairedRounds, report, showRatios } from './lib.js';

const ROUNDS = 20;
const SHOTS = 20;

const site = createServer((req, res) => {
  const tall = req.url === '/tall';
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(
    tall
      ? // Random 4x4 blocks: a PNG of several MB, so the frames relayed are large.
        `<title>Tall</title><body style="margin:0"><canvas id=c width=1920 height=5000></canvas><script>
const c = document.getElementById('c').getContext('2d'); let s = 7;
for (let y = 0; y < 5000; y += 4) for (let x = 0; x < 1920; x += 4) {
  s = (s * 1103515245 + 12345) & 0x7fffffff; c.fillStyle = '#' + (s & 0xffffff).toString(16).padStart(6, '0'); c.fillRect(x, y, 4, 4);
}</script>`
      : '<title>First</title>',
  );
});
site.listen(0, '127.0.0.1');
await once(site, 'listening');
const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
const emulator = await startEmulator();
const options = { browser_url: emulator.browserUrl, api_key: emulator.apiKey, resolution: '1920x1080' };
const bareUrl = buildBrowserUrl(options).href;

interface Lib {
  name: string;
  ours(): Promise<{ page: () => Promise<Page>; close(): Promise<void> }>;
  bare(): Promise<{ page: () => Promise<Page>; close(): Promise<void> }>;
}
interface Page {
  goto(url: string): Promise<unknown>;
  screenshot(o: { fullPage: boolean; type: 'png' }): Promise<Uint8Array>;
}

const libs: Lib[] = [
  {
    name: 'Playwright',
    ours: async () => {
      const s = await connectPlaywright(chromium, options);
      return { page: () => s.browser.contexts()[0]?.newPage() as Promise<Page>, close: () => s.close() };
    },
    bare: async () => {
      const b = await chromium.connectOverCDP(bareUrl);
      return { page: () => b.contexts()[0]?.newPage() as Promise<Page>, close: () => b.close() };
    },
  },
  {
    name: 'Puppeteer',
    ours: async () => {
      const s = await connectPuppeteer(puppeteer, options);
      return { page: () => s.browser.newPage() as Promise<Page>, close: () => s.close() };
    },
    bare: async () => {
      const b = await puppeteer.connect({ browserWSEndpoint: bareUrl, defaultViewport: null });
      return { page: () => b.newPage() as Promise<Page>, close: () => b.close() };
    },
  },
];

async function untilIdle() {
  for (let i = 0; i < 100 && emulator.sessions().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
}

for (const lib of libs) {
  const navigate = async (which: 'ours' | 'bare') => {
    await untilIdle();
    const start = performance.now();
    const conn = await lib[which]();
    const page = await conn.page();
    await page.goto(`${origin}/`);
    const ms = performance.now() - start;
    await conn.close();
    return ms;
  };
  const nav = await pairedRounds(
    ROUNDS,
    () => navigate('ours'),
    () => navigate('bare'),
    (ms) => ms,
  );
  report(
    `connect: ${lib.name} connect-to-first-navigation, ours vs bare`,
    nav.ratio,
    '<= 1.10',
    nav.ratio <= 1.1,
    `median of ${ROUNDS} paired rounds; median ours ${median(nav.ours).toFixed(1)} ms, bare ${median(nav.bare).toFixed(1)} ms`,
  );

  const conns = { ours: await lib.ours(), bare: await lib.bare() };
  const pages = { ours: await conns.ours.page(), bare: await conns.bare.page() };
  let bytes = 0;
  for (const which of ['ours', 'bare'] as const) {
    await pages[which].goto(`${origin}/tall`);
    await pages[which].screenshot({ fullPage: true, type: 'png' });
  }
  const shoot = async (which: 'ours' | 'bare') => {
    const start = performance.now();
    const png = await pages[which].screenshot({ fullPage: true, type: 'png' });
    bytes = png.length;
    return performance.now() - start;
  };
  const shots = await pairedRounds(
    SHOTS,
    () => shoot('ours'),
    () => shoot('bare'),
    (ms) => ms,
  );
  await conns.ours.close();
  await conns.bare.close();
  report(
    `connect: ${lib.name} full-page 1920x5000 screenshots, ours vs bare`,
    shots.ratio,
    '<= 1.05',
    shots.ratio <= 1.05,
    `median of ${SHOTS} paired rounds; median ours ${median(shots.ours).toFixed(0)} ms, bare ${median(shots.bare).toFixed(0)} ms, ${(bytes / 1024).toFixed(0)} KiB each`,
  );
}

const executablePath = await findChromium();
const plain = { browser_url: emulator.browserUrl, api_key: emulator.apiKey };
const timed = async (open: () => Promise<{ close(): Promise<unknown> }>) => {
  await untilIdle();
  const start = performance.now();
  const opened = await open();
  const ms = performance.now() - start;
  await opened.close();
  return ms;
};
const LAUNCH_ROUNDS = 15;
for (const [name, ours, bare] of [
  [
    'Playwright',
    () => connectPlaywright(chromium, plain),
    () => chromium.launch({ executablePath, args: ['--no-sandbox'] }),
  ],
  [
    'Puppeteer',
    () => connectPuppeteer(puppeteer, plain),
    () => puppeteer.launch({ executablePath, args: ['--no-sandbox'] }),
  ],
] as const) {
  const r = await pairedRounds(
    LAUNCH_ROUNDS,
    () => timed(ours),
    () => timed(bare),
    (ms) => ms,
  );
  report(
    `connect: ${name} connected session, emulator (warm pool) vs launching Chromium yourself`,
    r.ratio,
    '<= 0.7',
    r.ratio <= 0.7,
    `median of ${LAUNCH_ROUNDS} paired rounds (${showRatios(r.ratios)}); median ours ${median(r.ours).toFixed(0)} ms, launch ${median(r.bare).toFixed(0)} ms`,
  );
}

await emulator.close();
site.close();
