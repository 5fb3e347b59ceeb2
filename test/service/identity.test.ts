/**
 * The identity a session's options ask for, as pages, workers and servers see it, through real
 * Playwright and Puppeteer against the emulator: one user agent (never HeadlessChrome), platform
 * and brands in the page, its worker and the request headers; a phone's screen; a country's
 * time zone, language and a place inside it; `lang` over the country's language.
 */

import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { iso1A2Code } from '@rapideditor/country-coder';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPlaywright } from '../../packages/cloud-browser/src/connect/playwright.js';
import { connectPuppeteer } from '../../packages/cloud-browser/src/connect/puppeteer.js';
import type { BrowserUrlOptions } from '../../packages/cloud-browser/src/index.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';

const PAGE = `<!doctype html><meta name="viewport" content="width=device-width"><title>who</title><script>
const hints = () => navigator.userAgentData ? { brands: navigator.userAgentData.brands.map((b) => b.brand + ' ' + b.version), platform: navigator.userAgentData.platform, mobile: navigator.userAgentData.mobile } : null;
window.report = async () => {
  const worker = new Worker('/worker.js');
  const fromWorker = await new Promise((resolve) => { worker.onmessage = (e) => resolve(e.data); });
  return { ua: navigator.userAgent, platform: navigator.platform, hints: hints(), webdriver: navigator.webdriver,
    language: navigator.language, languages: [...navigator.languages], tz: Intl.DateTimeFormat().resolvedOptions().timeZone,
    offset: new Date(Date.UTC(2025, 0, 15, 12)).getTimezoneOffset(), width: innerWidth, touch: navigator.maxTouchPoints, worker: fromWorker };
};
window.place = () => new Promise((resolve) => navigator.geolocation.getCurrentPosition((p) => resolve([p.coords.longitude, p.coords.latitude]), (e) => resolve('geolocation error ' + e.code + ': ' + e.message), { timeout: 10000 }));
</script>`;
const WORKER = `postMessage({ ua: navigator.userAgent, platform: navigator.platform, language: navigator.language,
  hints: navigator.userAgentData ? { brands: navigator.userAgentData.brands.map((b) => b.brand + ' ' + b.version), platform: navigator.userAgentData.platform, mobile: navigator.userAgentData.mobile } : null });`;

interface Report {
  ua: string;
  platform: string;
  hints: { brands: string[]; platform: string; mobile: boolean } | null;
  webdriver: boolean;
  language: string;
  languages: string[];
  tz: string;
  offset: number;
  width: number;
  touch: number;
  worker: { ua: string; platform: string; language: string; hints: Report['hints'] };
}

let emulator: Emulator;
let server: Server;
let origin = '';
const seen: { path: string; headers: IncomingHttpHeaders }[] = [];

beforeAll(async () => {
  emulator = await startEmulator();
  server = createServer((req, res) => {
    seen.push({ path: req.url ?? '/', headers: req.headers });
    const worker = req.url === '/worker.js';
    res.writeHead(200, { 'content-type': worker ? 'text/javascript' : 'text/html' }).end(worker ? WORKER : PAGE);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await emulator?.close();
  server?.close();
});

const base = () => ({ browser_url: emulator.browserUrl, api_key: emulator.apiKey });

/** Open a session with `options` through Playwright, load the page, and read what it and its worker say. */
async function viaPlaywright(
  options: BrowserUrlOptions,
  run?: (page: import('playwright-core').Page) => Promise<unknown>,
) {
  const session = await connectPlaywright(chromium, { ...base(), ...options });
  try {
    const page = await session.browser.contexts()[0]!.newPage();
    seen.length = 0;
    await page.goto(`${origin}/`);
    const report = (await page.evaluate('report()')) as Report;
    return { report, extra: await run?.(page), headers: seen.find((s) => s.path === '/')?.headers ?? {} };
  } finally {
    await session.close();
  }
}

async function viaPuppeteer(options: BrowserUrlOptions) {
  const session = await connectPuppeteer(puppeteer, { ...base(), ...options });
  try {
    const page = await session.browser.newPage();
    seen.length = 0;
    await page.goto(`${origin}/`);
    const report = (await page.evaluate('report()')) as Report;
    return {
      report,
      headers: seen.find((s) => s.path === '/')?.headers ?? {},
      worker: seen.find((s) => s.path === '/worker.js')?.headers ?? {},
    };
  } finally {
    await session.close();
  }
}

const OSES = [
  ['linux', /\(X11; Linux x86_64\)/, 'Linux x86_64', 'Linux', false],
  ['windows', /\(Windows NT 10\.0; Win64; x64\)/, 'Win32', 'Windows', false],
  ['macos', /\(Macintosh; Intel Mac OS X 10_15_7\)/, 'MacIntel', 'macOS', false],
  ['android', /\(Linux; Android 10; K\).* Mobile Safari/, 'Linux armv81', 'Android', true],
  ['iphone', /\(iPhone; CPU iPhone OS 18_1 like Mac OS X\).*CriOS/, 'iPhone', 'iOS', true],
  ['ipad', /\(iPad; CPU OS 18_1 like Mac OS X\).*CriOS/, 'iPad', 'iOS', false],
] as const;

describe('os, through Playwright', () => {
  it.each(OSES)(
    '%s: the page, its worker and the server see one identity',
    async (os, ua, platform, hintPlatform, mobile) => {
      const { report, headers } = await viaPlaywright({ os });
      expect(report.ua).toMatch(ua);
      expect(report.ua).not.toMatch(/Headless/);
      expect(report.platform).toBe(platform);
      expect(report.hints?.platform).toBe(hintPlatform);
      expect(report.hints?.mobile).toBe(mobile);
      expect(report.webdriver).toBe(false);
      expect(report.worker).toEqual({
        ua: report.ua,
        platform: report.platform,
        language: report.language,
        hints: report.hints,
      });
      expect(headers['user-agent']).toBe(report.ua);
      expect(headers['sec-ch-ua-platform']).toBe(`"${hintPlatform}"`);
      expect(headers['sec-ch-ua-mobile']).toBe(mobile ? '?1' : '?0');
      if (os === 'android' || os === 'iphone' || os === 'ipad') {
        expect(report.width).toBe(os === 'ipad' ? 820 : os === 'iphone' ? 390 : 412);
        expect(report.touch).toBeGreaterThan(0);
      }
    },
  );
});

const BRANDS = [
  ['chrome', 'Google Chrome', /Chrome\/\d+\.0\.0\.0 Safari\/537\.36$/],
  ['edge', 'Microsoft Edge', / Edg\/\d+\.0\.0\.0$/],
  ['brave', 'Brave', /Chrome\/\d+\.0\.0\.0 Safari\/537\.36$/],
  ['opera', 'Opera', / OPR\/\d+\.0\.0\.0$/],
] as const;

describe('browser_brand, through Puppeteer', () => {
  it.each(BRANDS)('%s: brands in the page, its worker and Sec-CH-UA', async (brand, name, ua) => {
    const { report, headers, worker } = await viaPuppeteer({ browser_brand: brand, os: 'windows' });
    expect(report.ua).toMatch(ua);
    expect(report.hints?.brands.some((b) => b.startsWith(`${name} `))).toBe(true);
    expect(report.hints?.brands.some((b) => b.startsWith('Chromium '))).toBe(true);
    expect(report.worker.hints).toEqual(report.hints);
    expect(report.worker.ua).toBe(report.ua);
    expect(headers['sec-ch-ua']).toContain(`"${name}";v="`);
    expect(headers['user-agent']).toBe(report.ua);
    expect(worker['user-agent']).toBe(report.ua);
  });
});

describe('country', () => {
  it.each([
    ['jp', 'Asia/Tokyo', 'ja-JP', 'JP'],
    ['de', 'Europe/Berlin', 'de-DE', 'DE'],
  ])('%s: its time zone, its language, and a place inside it', async (country, tz, language, code) => {
    const { report, extra, headers } = await viaPlaywright({ country }, (page) => page.evaluate('place()'));
    expect(report.tz).toBe(tz);
    expect(report.language).toBe(language);
    expect(report.worker.language).toBe(language);
    expect(headers['accept-language']).toMatch(new RegExp(`^${language}`));
    expect(Array.isArray(extra) ? iso1A2Code(extra as [number, number]) : extra).toBe(code);
  });

  it("lang given wins over the country language; time zone and place stay the country's", async () => {
    const { report } = await viaPlaywright({ country: 'jp', lang: 'fr-FR' });
    expect(report.language).toBe('fr-FR');
    expect(report.tz).toBe('Asia/Tokyo');
    expect(report.offset).toBe(-540);
  });
});
