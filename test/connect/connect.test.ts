import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectPlaywright } from '../../packages/cloud-browser/src/connect/playwright.js';
import { type CdpTransport, connectPuppeteer } from '../../packages/cloud-browser/src/connect/puppeteer.js';
import type { CloudBrowserSession } from '../../packages/cloud-browser/src/connect/session.js';
import {
  isAuthenticationError,
  isBadRequestError,
  isConfigError,
  isServiceError,
  isSessionClosedError,
  projectSalt,
  type ServiceError,
  type SessionClosedError,
} from '../../packages/cloud-browser/src/index.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { drivers, eventually, netHandles, processAlive } from '../support/drivers.js';
import { rejection } from '../support/rejection.js';
import { type Site, startSite } from '../support/site.js';

const API_KEY = 'scp-test-0000000000000000000000000000000000';
let emulator: Emulator;
let site: Site;
const open: CloudBrowserSession<unknown>[] = [];

beforeAll(async () => {
  emulator = await startEmulator({ apiKeys: [API_KEY] });
  site = await startSite();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await emulator.close();
  await site.close();
});

describe.each(drivers)('$name', (driver) => {
  const base = () => ({ browser_url: emulator.browserUrl, api_key: API_KEY });
  const connect = async (options: object = {}, connectOptions = {}) => {
    const s = await driver.connect({ ...base(), ...options }, connectOptions);
    open.push(s);
    return s;
  };

  it('connects, navigates to a local page and reads its title', async () => {
    const session = await connect();
    const page = await driver.newPage(session);
    await page.goto(site.url);
    expect(await page.title()).toBe('Hello from the site');
  });

  it('gives the run id, salt and VNC credentials the emulator issued', async () => {
    const session = await connect({ enable_vnc: true, vnc_password: 'vnc-pass-1' });
    const [issued] = emulator.sessions();
    expect(session.runId).toBe(issued?.runId);
    expect(session.salt).toBe('701018da');
    expect(session.salt).toBe(projectSalt(API_KEY));
    const host = new URL(emulator.browserUrl).host;
    expect(session.vnc?.tcp).toEqual({
      url: `vnc://${issued?.runId}@127.0.0.1:${emulator.vncPort}`,
      password: '701018da-vnc-pass-1',
    });
    expect(session.vnc?.websocket).toEqual({ url: `ws://${host}/run/${issued?.runId}/vnc`, password: 'vnc-pass-1' });
  });

  it('gives no VNC credentials without a password (VNC for the HITL networks only)', async () => {
    const session = await connect({ enable_vnc: true, hitl_allowed_networks: ['127.0.0.1/32'] });
    expect(session.vnc).toBeUndefined();
    expect(session.salt).toBe('701018da');
  });

  it('leaves no server, socket or Chromium process of ours after close()', async () => {
    // Earlier sessions' browsers gone first: their DevTools pipes are sockets of this process too.
    await eventually(
      () => emulator.sessions().length,
      (n) => n === 0,
    );
    const before = netHandles();
    const session = await driver.connect(base());
    const page = await driver.newPage(session);
    await page.goto(site.url);
    const pid = emulator.sessions().find((s) => s.runId === session.runId)?.pid ?? 0;
    expect(pid).toBeGreaterThan(0);
    expect(processAlive(pid)).toBe(true);
    await session.close();
    expect(
      await eventually(
        () => processAlive(pid),
        (alive) => !alive,
      ),
    ).toBe(false);
    const mine = () => emulator.sessions().filter((s) => s.runId === session.runId).length;
    expect(await eventually(mine, (n) => n === 0)).toBe(0);
    expect(await eventually(netHandles, (h) => h.sockets <= before.sockets && h.servers <= before.servers)).toEqual(
      before,
    );
    expect(driver.isConnected(session)).toBe(false);
  });

  it.each([
    ['an HTTP 503 answer', { code: 'ALLOCATION_FAILED', mode: 'http' as const }, 503, true],
    ['an HTTP 429 answer', { code: 'TOO_MANY_CONCURRENT_REQUEST', mode: 'http' as const, status: 429 }, 429, true],
    ['an HTTP 403 answer', { code: 'PLAN_LIMIT', mode: 'http' as const, status: 403 }, 403, false],
    [
      'a frame then close 1013',
      { code: 'PROXY_UNAVAILABLE', mode: 'frame' as const, closeCode: 1013 as const },
      503,
      true,
    ],
    [
      'a frame then close 1011',
      { code: 'CDP_CONNECTION_FAILED', mode: 'frame' as const, closeCode: 1011 as const },
      503,
      true,
    ],
    [
      'a frame then close 1008',
      { code: 'INVALID_SESSION', mode: 'frame' as const, closeCode: 1008 as const },
      400,
      false,
    ],
  ])('turns a refusal by %s into a typed ServiceError', async (_name, fault, status, retryable) => {
    emulator.faults.refuseNext({ ...fault, message: 'refused for the test' });
    const error = (await rejection(connect())) as ServiceError;
    expect(isServiceError(error)).toBe(true);
    expect(error).toMatchObject({
      code: `ERR::BROWSER::${fault.code}`,
      http_status_code: status,
      is_retryable: retryable,
    });
    expect(error.message).toContain('refused for the test');
    expect(emulator.sessions()).toEqual([]);
  });

  it('is refused with 401 for a wrong key', async () => {
    const bad = await rejection(connect({ api_key: 'wrong-key-123' }));
    expect(isAuthenticationError(bad)).toBe(true);
  });

  it('retries a retryable refusal when asked, and succeeds', async () => {
    emulator.faults.refuseNext({ code: 'ALLOCATION_FAILED' });
    emulator.faults.refuseNext({ code: 'TOO_MANY_CONCURRENT_REQUEST', mode: 'frame' });
    const session = await connect({}, { retries: 2 });
    expect(session.runId).toMatch(/^run-/);
  });

  it('does not retry a refusal that is not retryable', async () => {
    emulator.faults.refuseNext({ code: 'PLAN_LIMIT', status: 403 });
    const error = (await rejection(connect({}, { retries: 3 }))) as ServiceError;
    expect(error.code).toBe('ERR::BROWSER::PLAN_LIMIT');
    // The refusal was used up by the single attempt: the next connect succeeds at once.
    expect((await connect()).runId).toMatch(/^run-/);
  });

  it('fails pending calls promptly and reports a SessionClosedError when the browser dies', async () => {
    const session = await connect();
    const page = await driver.newPage(session);
    await page.goto(site.url);
    const pending = page.evaluate(() => new Promise<number>(() => {}));
    pending.catch(() => {});
    const guarded = session.guard(page.evaluate(() => new Promise<number>(() => {})));
    guarded.catch(() => {});
    await emulator.faults.killBrowser(session.runId ?? '');
    const closed: SessionClosedError = await session.closed;
    expect(isSessionClosedError(closed)).toBe(true);
    expect(closed.closeCode).toBe(1011);
    expect(closed.reason).toContain('ERR::BROWSER::SESSION_TERMINATED');
    expect((closed.cause as ServiceError).code).toBe('ERR::BROWSER::SESSION_TERMINATED');
    // Through guard(), the pending call fails with the session's own typed error.
    const typed = (await rejection(guarded)) as SessionClosedError;
    expect(isSessionClosedError(typed)).toBe(true);
    expect(typed.closeCode).toBe(1011);
    expect(await rejection(session.guard(page.title()))).toBe(closed);
    const failed = await rejection(pending);
    expect(failed).toBeInstanceOf(Error);
    // Playwright reports the relay's close reason with the failure; Puppeteer says "Target closed".
    if (driver.name === 'playwright') expect(String(failed)).toContain('ERR::BROWSER::SESSION_TERMINATED');
    await session.close();
  });
});

describe('server-side validation', () => {
  it('answers invalid options with 400 and the option named', async () => {
    const url = new URL(emulator.browserUrl);
    url.search = `api_key=${API_KEY}&timeout=99999`;
    const { openCloudSocket } = await import('../../packages/cloud-browser/src/connect/socket.js');
    const error = await rejection(openCloudSocket(url));
    expect(isBadRequestError(error)).toBe(true);
    expect((error as Error).message).toContain('`timeout` must be at most 1800');
  });
});

describe("Puppeteer's transport", () => {
  /** Real Puppeteer, its transport observed as Puppeteer's Connection set it up. */
  async function observed() {
    let transport: CdpTransport | undefined;
    const calls: unknown[][] = [];
    const session = await connectPuppeteer(
      {
        connect: async (options) => {
          transport = options.transport;
          const browser = await puppeteer.connect(options);
          const theirs = transport.onclose;
          transport.onclose = (...args) => {
            calls.push(args);
            theirs?.(...args);
          };
          return browser;
        },
      },
      { browser_url: emulator.browserUrl, api_key: API_KEY },
    );
    return { session, calls };
  }

  it('tells onclose the close code and reason: 1000 on a clean close', async () => {
    const { session, calls } = await observed();
    await session.close();
    expect(calls).toEqual([[1000, expect.any(String)]]);
  });

  it('tells onclose the close code and reason: 1011 and the service error when the browser dies', async () => {
    const { session, calls } = await observed();
    await emulator.faults.killBrowser(session.runId ?? '');
    await session.closed;
    expect(calls).toEqual([[1011, expect.stringContaining('ERR::BROWSER::SESSION_TERMINATED')]]);
    expect(session.browser.connected).toBe(false);
  });
});

describe('a Playwright script that ends with browser.close()', () => {
  it('exits by itself, and its session ends with 1000, not 1011', async () => {
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/fixtures/close-and-exit.ts'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, CLOUD_BROWSER_URL: emulator.browserUrl, CLOUD_API_KEY: API_KEY, SITE: site.url },
      // A relay left listening keeps the process alive: it would be killed here, and fail.
      timeout: 60_000,
    });
    const { stdout } = await run;
    expect(stdout).toBe('title: Hello from the site\nclosed: 1000\n');
  }, 90_000);

  it('leaves no listening relay and no socket behind in the process', async () => {
    const before = netHandles();
    const session = await connectPlaywright(chromium, { browser_url: emulator.browserUrl, api_key: API_KEY });
    expect(netHandles().servers).toBe(before.servers + 1);
    await session.browser.close();
    expect((await session.closed).closeCode).toBe(1000);
    const after = await eventually(netHandles, (h) => h.servers === before.servers && h.sockets <= before.sockets);
    expect(after.servers).toBe(before.servers);
  }, 60_000);
});

describe('connect options', () => {
  it.each([
    [{ retries: Number.NaN }, '`retries` must be a whole number of retries, from 0 to 10 (got NaN)'],
    [{ retries: -1 }, '`retries` must be a whole number of retries, from 0 to 10 (got -1)'],
    [{ timeout: Number.POSITIVE_INFINITY }, '`timeout` must be a whole number of milliseconds, from 1 to 600000'],
    [{ keepAlive: 1e9 }, '`keepAlive` must be a number of seconds, from 0 to 3600 (got 1000000000)'],
  ])('refuses %j before opening anything, naming the option', async (connectOptions, message) => {
    const before = emulator.sessions().length;
    const error = await rejection(
      connectPlaywright(chromium, { browser_url: emulator.browserUrl, api_key: API_KEY }, connectOptions),
    );
    expect(isConfigError(error)).toBe(true);
    expect((error as Error).message).toContain(message);
    expect(emulator.sessions()).toHaveLength(before);
  });
});
