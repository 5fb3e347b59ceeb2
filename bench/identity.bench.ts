/**
 * What an identity costs a session: connect Playwright, open a page and load a local page, for a
 * session with `os`, `browser_brand` and `country` against a plain one, on one emulator (both
 * on the warm path: the identity is put on through DevTools, no launch flag), paired rounds.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { connectPlaywright } from '../packages/cloud-browser/src/connect/playwright.js';
import { startEmulator } from '../packages/emulator/src/index.js';
import { median, pairedRounds, report, showRatios } from './lib.js';

const ROUNDS = 15;
const site = createServer((_req, res) =>
  res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>first</title><p>first page</p>'),
);
site.listen(0, '127.0.0.1');
await once(site, 'listening');
const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
const emulator = await startEmulator({ warmBrowsers: 2 });

/** Milliseconds from connecting to the first page loaded. */
async function firstNavigation(options: object): Promise<number> {
  const start = performance.now();
  const session = await connectPlaywright(chromium, {
    browser_url: emulator.browserUrl,
    api_key: emulator.apiKey,
    ...options,
  });
  const context = session.browser.contexts()[0];
  if (!context) throw new Error('no default context');
  const page = await context.newPage();
  await page.goto(url);
  const ms = performance.now() - start;
  await session.close();
  // Let the pool start the browser that replaces the one taken.
  await new Promise((r) => setTimeout(r, 1500));
  return ms;
}

try {
  await firstNavigation({});
  const rounds = await pairedRounds(
    ROUNDS,
    () => firstNavigation({ os: 'windows', browser_brand: 'edge', country: 'de' }),
    () => firstNavigation({}),
    (ms) => ms,
  );
  report(
    'identity: first navigation of a session with os, browser_brand and country vs a plain one',
    rounds.ratio,
    '<= 1.05',
    rounds.ratio <= 1.05,
    `median of ${ROUNDS} paired rounds (${showRatios(rounds.ratios)}); median identity ${median(rounds.ours).toFixed(0)} ms, plain ${median(rounds.bare).toFixed(0)} ms`,
  );
} finally {
  await emulator.close();
  site.close();
}
