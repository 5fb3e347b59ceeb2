import { inspect } from 'node:util';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CloudBrowserApi } from '../../packages/cloud-browser/src/api/index.js';
import { connectPlaywright } from '../../packages/cloud-browser/src/connect/playwright.js';
import { connectPuppeteer } from '../../packages/cloud-browser/src/connect/puppeteer.js';
import type { BrowserUrlOptions } from '../../packages/cloud-browser/src/index.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { closedPort, type FakeServer, startWsServer } from '../support/servers.js';

// Secrets in every secret option of the session. Each failure path below is driven with
// all of them, and nothing thrown, printed or handed to a library may contain one.
const SECRETS = {
  api_key: 'leak-api-key-7d3f1a9e',
  vault_key: btoa('0123456789abcdef0123456789abcdef'),
  vnc_password: 'leak-vnc-5c2b',
  rtc_password: 'leak-rtc-8e4d',
  proxy_password: 'leakProxyPw31',
};
const secretOptions: BrowserUrlOptions = {
  api_key: SECRETS.api_key,
  vault: 'MyVault',
  vault_key: SECRETS.vault_key,
  enable_vnc: true,
  vnc_password: SECRETS.vnc_password,
  enable_rtc: true,
  rtc_username: 'rtc-user',
  rtc_password: SECRETS.rtc_password,
};

let emulator: Emulator;
let fake: FakeServer | undefined;
const printed: string[] = [];
const handedToLibraries: string[] = [];
const restore: (() => void)[] = [];

beforeAll(async () => {
  emulator = await startEmulator({ apiKeys: [SECRETS.api_key] });
  // A vault key is the service's to make: the vault the sessions open is created for real.
  const api = new CloudBrowserApi({ browserUrl: emulator.browserUrl, key: SECRETS.api_key });
  const { key } = await api.vaults.create({ name: 'MyVault' });
  SECRETS.vault_key = key;
  secretOptions.vault_key = key;
});
afterAll(async () => {
  await emulator.close();
});
beforeEach(() => {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      printed.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write;
    restore.push(() => {
      stream.write = write;
    });
  }
});
afterEach(async () => {
  for (const r of restore.splice(0)) r();
  await fake?.close();
  fake = undefined;
});

const watchedChromium = {
  connectOverCDP: (url: string, options?: { timeout?: number }) => {
    handedToLibraries.push(url);
    return chromium.connectOverCDP(url, options);
  },
};
const watchedPuppeteer = {
  connect: async (options: Parameters<typeof puppeteer.connect>[0]) => {
    handedToLibraries.push(JSON.stringify({ ...options, transport: undefined }));
    const browser = await puppeteer.connect(options);
    handedToLibraries.push(browser.wsEndpoint());
    return browser;
  },
};

const connectors = [
  ['playwright', (o: BrowserUrlOptions, c = {}) => connectPlaywright(watchedChromium, o, c)],
  ['puppeteer', (o: BrowserUrlOptions, c = {}) => connectPuppeteer(watchedPuppeteer, o, c)],
] as const;

function everything(e: unknown): string {
  const parts = [String(e), inspect(e, { depth: Number.POSITIVE_INFINITY, showHidden: true })];
  let cause: unknown = e;
  while (cause instanceof Error) {
    parts.push(cause.message, cause.stack ?? '', inspect(cause, { showHidden: true, depth: 10 }));
    try {
      parts.push(JSON.stringify(cause));
    } catch {}
    cause = cause.cause;
  }
  return parts.join('\n');
}

function expectClean(text: string) {
  for (const [name, secret] of Object.entries(SECRETS)) {
    expect(text, name).not.toContain(secret);
    expect(text, name).not.toContain(encodeURIComponent(secret));
  }
}

async function failure(run: () => Promise<{ close(): Promise<void> }>): Promise<unknown> {
  try {
    const session = await run();
    await session.close();
  } catch (e) {
    return e;
  }
  throw new Error('expected a failure');
}

const echo = () =>
  `service echoed api_key=${SECRETS.api_key}&vault_key=${encodeURIComponent(SECRETS.vault_key)} vnc_password=${SECRETS.vnc_password} rtc_password=${SECRETS.rtc_password}`;

describe.each(connectors)('no secret leaks from %s', (_name, connect) => {
  const withProxy = async (extra: BrowserUrlOptions = {}) => ({
    ...secretOptions,
    byop_proxy: `socks5://user:${SECRETS.proxy_password}@127.0.0.1:${await closedPort()}`,
    browser_url: emulator.browserUrl,
    ...extra,
  });

  it('on an HTTP refusal that echoes the secrets', async () => {
    emulator.faults.refuseNext({ code: 'ALLOCATION_FAILED', message: echo() });
    expectClean(everything(await failure(async () => connect(await withProxy()))));
  });

  it('on a frame refusal that echoes the secrets', async () => {
    emulator.faults.refuseNext({ code: 'PROXY_UNAVAILABLE', mode: 'frame', message: echo() });
    expectClean(everything(await failure(async () => connect(await withProxy()))));
  });

  it('when the browser is killed mid-session', async () => {
    const session = await connect(await withProxy());
    await emulator.faults.killBrowser(session.runId ?? '');
    expectClean(everything(await session.closed));
    await session.close();
  });

  it('on a salt that does not match', async () => {
    fake = await startWsServer({ headers: ['X-Browser-Project-Salt: 00000000'] });
    expectClean(everything(await failure(async () => connect(await withProxy({ browser_url: fake?.url })))));
  });

  it('when nothing listens', async () => {
    const port = await closedPort();
    expectClean(
      everything(await failure(async () => connect(await withProxy({ browser_url: `ws://127.0.0.1:${port}/` })))),
    );
  });

  it('when the library cannot attach', async () => {
    fake = await startWsServer({});
    expectClean(
      everything(await failure(async () => connect(await withProxy({ browser_url: fake?.url }), { timeout: 300 }))),
    );
  });

  it('on invalid options', async () => {
    expectClean(
      everything(
        await failure(async () =>
          connect({ ...(await withProxy()), timeout: 99999, vault_key: `${SECRETS.vault_key}=` }),
        ),
      ),
    );
  });

  it('in what the session shows when printed', async () => {
    const session = await connect(await withProxy());
    expectClean(inspect(session, { depth: 4 }));
    await session.close();
  });
});

describe('what the libraries are handed', () => {
  it('holds no secret, and nothing printed during the tests does', () => {
    expect(handedToLibraries.length).toBeGreaterThan(4);
    for (const url of handedToLibraries) expectClean(url);
    expectClean(printed.join(''));
  });
});
