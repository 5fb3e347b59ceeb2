/**
 * What the connectors and clients tell, to a `logger` and under DEBUG=cloud-browser:*:
 * connecting, refused, retrying, connected, closing, closed, each call; never a secret.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudBrowserApi } from '../packages/cloud-browser/src/api/client.js';
import { connectPlaywright } from '../packages/cloud-browser/src/connect/playwright.js';
import { isConfigError } from '../packages/cloud-browser/src/index.js';
import type { Logger } from '../packages/cloud-browser/src/internal/log.js';
import { type Emulator, startEmulator } from '../packages/emulator/src/index.js';
import { rejection } from './support/rejection.js';

const KEY = 'log-test-key-4f1e2d3c';
const VNC = 'vnc-secret-7a6b';
let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator({ apiKeys: [KEY] });
});
afterAll(() => emulator?.close());

/** A logger that keeps its lines, level first. */
function keeper(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    debug: (m) => lines.push(`debug ${m}`),
    info: (m) => lines.push(`info ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
  };
}

describe('a logger', () => {
  it('hears a connection refused, retried, made and closed, with no secret', async () => {
    const logger = keeper();
    emulator.faults.refuseNext({ code: 'ALLOCATION_FAILED', mode: 'frame' });
    const session = await connectPlaywright(
      chromium,
      { browser_url: emulator.browserUrl, api_key: KEY, enable_vnc: true, vnc_password: VNC },
      { retries: 1, logger },
    );
    await session.close();
    await session.closed;
    const text = logger.lines.join('\n');
    expect(logger.lines.map((l) => l.split(' ').slice(0, 3).join(' '))).toEqual([
      'debug cloud-browser:connect connecting',
      'warn cloud-browser:connect refused:',
      'debug cloud-browser:connect connecting',
      'info cloud-browser:connect connected',
      'debug cloud-browser:connect closing:',
      'info cloud-browser:connect closed:',
    ]);
    expect(text).toMatch(/refused: .*ALLOCATION_FAILED.*; retrying in \d+ ms \(1 of 1\)/);
    expect(text).toContain('(retry 1 of 1)');
    expect(text).toMatch(new RegExp(`connected Playwright: run ${session.runId} in \\d+ ms`));
    expect(text).toContain('closed: code 1000');
    expect(text).toContain('api_key=***');
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(VNC);
  }, 60_000);

  it('hears each REST call and a refusal, with no key', async () => {
    const logger = keeper();
    const api = new CloudBrowserApi({ key: KEY, browserUrl: emulator.browserUrl, logger });
    await api.sessions.list();
    await rejection(api.sessions.stop('no-such-session'));
    const text = logger.lines.join('\n');
    expect(text).toMatch(/debug cloud-browser:api GET \/sessions 200 in \d+ ms/);
    expect(text).toMatch(
      /warn cloud-browser:api POST \/session\/no-such-session\/stop refused: ERR::BROWSER::SESSION_NOT_FOUND/,
    );
    expect(text).not.toContain(KEY);
  });

  it('must have debug, info and warn: a ConfigError names it otherwise', async () => {
    const bad = { debug: () => {} } as unknown as Logger;
    const error = await rejection(
      connectPlaywright(chromium, { browser_url: emulator.browserUrl, api_key: KEY }, { logger: bad }),
    );
    expect(isConfigError(error)).toBe(true);
    expect((error as Error).message).toContain('`logger` must have debug, info and warn');
    expect(() => new CloudBrowserApi({ key: KEY, browserUrl: emulator.browserUrl, logger: bad })).toThrow(/`logger`/);
  });
});

describe('DEBUG=cloud-browser:*', () => {
  const run = (debug: string | undefined) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/fixtures/debug-child.ts'], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      env: {
        ...process.env,
        DEBUG: debug,
        CLOUD_BROWSER_URL: emulator.browserUrl,
        CLOUD_API_KEY: KEY,
        VNC_PASSWORD: VNC,
      },
      timeout: 60_000,
    });

  it('prints the connection and the calls to standard error, with no secret', async () => {
    const { stdout, stderr } = await run('cloud-browser:*');
    expect(stdout).toBe('done\n');
    expect(stderr).toMatch(/^cloud-browser:connect debug connecting Playwright to ws:\/\/.*api_key=\*\*\* \+\d+ms$/m);
    expect(stderr).toMatch(/^cloud-browser:connect info connected Playwright: run run-[0-9a-f]+ in \d+ ms \+\d+ms$/m);
    expect(stderr).toMatch(/^cloud-browser:api debug GET \/sessions 200 in \d+ ms \+\d+ms$/m);
    expect(stderr).not.toContain(KEY);
    expect(stderr).not.toContain(VNC);
  }, 90_000);

  it('prints only the channels named, and nothing without DEBUG', async () => {
    const api = await run('cloud-browser:api');
    expect(api.stderr).toContain('cloud-browser:api');
    expect(api.stderr).not.toContain('cloud-browser:connect');
    expect((await run(undefined)).stderr).toBe('');
  }, 90_000);
});
