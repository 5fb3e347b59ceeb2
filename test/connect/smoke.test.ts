import { createServer } from 'node:http';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectPlaywright } from '../../src/connect/playwright.js';
import { connectPuppeteer } from '../../src/connect/puppeteer.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';

let emulator: Emulator;
let site: string;
const server = createServer((_req, res) => {
  res.setHeader('content-type', 'text/html');
  res.end('<title>Hello</title>');
});
beforeAll(async () => {
  emulator = await startEmulator();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  site = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});
afterAll(async () => {
  await emulator.close();
  server.close();
});

it('connects playwright', async () => {
  const s = await connectPlaywright(chromium, {
    browser_url: emulator.browserUrl,
    api_key: emulator.apiKey,
    enable_vnc: true,
    vnc_password: 'pw12345',
  });
  const page = await s.browser.contexts()[0]!.newPage();
  await page.goto(site);
  expect(await page.title()).toBe('Hello');
  console.log(s.runId, s.salt, s.vnc);
  await s.close();
  expect(emulator.sessions()).toEqual([]);
});

it('connects puppeteer', async () => {
  const s = await connectPuppeteer(puppeteer, { browser_url: emulator.browserUrl, api_key: emulator.apiKey });
  const page = await s.browser.newPage();
  await page.goto(site);
  expect(await page.title()).toBe('Hello');
  await s.close();
  expect(emulator.sessions()).toEqual([]);
});
