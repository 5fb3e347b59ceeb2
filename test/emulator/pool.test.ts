/**
 * The emulator's warm pool: a session whose options need no launch flag gets a browser started
 * before it asked, with a profile no session used; options that only a launch flag can honour
 * get a browser of their own; the pool's browsers end with the emulator.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPlaywright } from '../../packages/cloud-browser/src/connect/playwright.js';
import { isConfigError } from '../../packages/cloud-browser/src/index.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { eventually, processAlive } from '../support/drivers.js';
import { rejection } from '../support/rejection.js';
import { type Site, startSite } from '../support/site.js';

/** Each top-level browser process of this process's emulators, with its profile folder. */
function browsers(): { pid: number; profile: string }[] {
  const prefix = join(tmpdir(), `cloud-browser-emulator-${process.pid}-`);
  const found: { pid: number; profile: string }[] = [];
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0');
      const profile = args.find((a) => a.startsWith(`--user-data-dir=${prefix}`));
      if (profile && !args.some((a) => a.startsWith('--type='))) {
        found.push({ pid: Number(entry), profile: profile.slice('--user-data-dir='.length) });
      }
    } catch {} // Gone while we looked.
  }
  return found;
}

let emulator: Emulator;
let site: Site;
beforeAll(async () => {
  emulator = await startEmulator({ warmBrowsers: 1 });
  site = await startSite();
});
afterAll(async () => {
  await emulator?.close();
  await site?.close();
});

/** The browser of the pool: running, and no session's. */
const pooled = () => {
  const inUse = new Set(emulator.sessions().map((s) => s.pid));
  return browsers().filter((b) => !inUse.has(b.pid));
};

describe.skipIf(process.platform !== 'linux')('the warm pool', () => {
  const options = () => ({ browser_url: emulator.browserUrl, api_key: emulator.apiKey });

  it('serves the next plain session with the browser it started, whose profile no session used', async () => {
    const first = await connectPlaywright(chromium, options());
    const page = await first.browser.contexts()[0]?.newPage();
    await page?.goto(`${site.url}`);
    await page?.evaluate(() => localStorage.setItem('left', 'by the first session'));
    const firstPid = emulator.sessions().find((s) => s.runId === first.runId)?.pid;
    // The replacement, started while the first session ran.
    const [warm] = await eventually(pooled, (p) => p.length === 1, 30_000);
    await first.close();
    await eventually(
      () => processAlive(firstPid ?? 0),
      (alive) => !alive,
    );
    const second = await connectPlaywright(chromium, options());
    const secondPid = emulator.sessions().find((s) => s.runId === second.runId)?.pid;
    expect(secondPid).toBe(warm?.pid);
    expect(secondPid).not.toBe(firstPid);
    const page2 = await second.browser.contexts()[0]?.newPage();
    await page2?.goto(`${site.url}`);
    expect(await page2?.evaluate(() => localStorage.getItem('left'))).toBeNull();
    await second.close();
  }, 60_000);

  it.each([
    ['resolution', { resolution: '1024x768' }],
    ['lang', { lang: 'fr-FR' }],
    ['languages', { languages: ['de-DE'] }],
  ] as const)(
    'starts a browser of its own for %s (a launch flag), leaving the pool as it was',
    async (_name, extra) => {
      const [warm] = await eventually(pooled, (p) => p.length === 1, 30_000);
      const session = await connectPlaywright(chromium, { ...options(), ...extra });
      const pid = emulator.sessions().find((s) => s.runId === session.runId)?.pid;
      expect(pid).not.toBe(warm?.pid);
      expect(pooled().map((b) => b.pid)).toEqual([warm?.pid]);
      if ('resolution' in extra) {
        const page = await session.browser.contexts()[0]?.newPage();
        expect(await page?.evaluate(() => [innerWidth, innerHeight])).toEqual([1024, 768]);
      }
      await session.close();
    },
    60_000,
  );

  it('ends its browsers with the emulator', async () => {
    const own = await startEmulator({ warmBrowsers: 2 });
    const before = new Set(browsers().map((b) => b.pid));
    const session = await connectPlaywright(chromium, { browser_url: own.browserUrl, api_key: own.apiKey });
    await eventually(
      () => browsers().filter((b) => !before.has(b.pid)).length,
      (n) => n === 3, // the session's and two warm ones
      30_000,
    );
    const started = browsers().filter((b) => !before.has(b.pid));
    await session.disconnect();
    await own.close();
    expect(started.filter((b) => processAlive(b.pid))).toEqual([]);
  }, 60_000);

  it('starts no browser for an emulator that opens no session, and none with warmBrowsers: 0', async () => {
    const before = browsers().length;
    const idle = await startEmulator();
    const off = await startEmulator({ warmBrowsers: 0 });
    const session = await connectPlaywright(chromium, { browser_url: off.browserUrl, api_key: off.apiKey });
    await new Promise((r) => setTimeout(r, 1500));
    expect(browsers().length).toBe(before + 1); // the session's own, nothing else
    await session.close();
    await Promise.all([idle.close(), off.close()]);
  }, 60_000);

  it.each([[-1], [Number.NaN], [1.5], [17]])('refuses warmBrowsers: %s with a ConfigError naming it', async (n) => {
    const error = await rejection(startEmulator({ warmBrowsers: n }));
    expect(isConfigError(error)).toBe(true);
    expect((error as Error).message).toContain('warmBrowsers');
  });
});
