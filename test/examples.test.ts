import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signDelivery } from '../packages/cloud-browser/src/webhooks/index.js';
import { type Emulator, startEmulator } from '../packages/emulator/src/index.js';
import { type CrawlSite, startCrawlSite } from './support/crawl-site.js';
import { crawlBody } from './support/deliveries.js';
import { startUntil } from './support/process.js';

// Each example runs as a user would run it (tsx, the package by its name), against the emulator.
const root = fileURLToPath(new URL('..', import.meta.url));
let emulator: Emulator;
let site: CrawlSite;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  emulator = await startEmulator();
  site = await startCrawlSite();
  env = {
    ...process.env,
    CLOUD_BROWSER_URL: emulator.browserUrl,
    CLOUD_API_URL: emulator.apiUrl,
    CLOUD_API_KEY: emulator.apiKey,
  };
});
afterAll(async () => {
  await emulator.close();
  await site.close();
});

const example = (file: string, args: string[]) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', `examples/${file}`, ...args], {
    cwd: root,
    env,
    timeout: 60_000,
  });

describe('examples run against the emulator', () => {
  it('build-url.ts prints the URL with its secrets hidden', async () => {
    const { stdout } = await example('build-url.ts', []);
    expect(stdout).toContain('languages=en-US%2Cfr-FR');
    expect(stdout).toContain('api_key=***');
    expect(stdout).not.toContain(emulator.apiKey);
  });

  it('puppeteer-script.ts reads a page and takes a screenshot', async () => {
    const { stdout } = await example('puppeteer-script.ts', [`${site.origin}/docs/2`]);
    expect(stdout).toContain('title: Doc 2');
    expect(stdout).toMatch(/screenshot: \d{4,} bytes/);
  });

  it('vnc-debug.ts prints both VNC endpoints', async () => {
    const { stdout } = await example('vnc-debug.ts', [`${site.origin}/docs/3`, '0']);
    expect(stdout).toContain('watching Doc 3');
    expect(stdout).toMatch(/native VNC: vnc:\/\/run-[0-9a-f]+@127\.0\.0\.1:\d+ password [0-9a-f]{8}-[0-9a-f]{12}/);
    expect(stdout).toMatch(/noVNC: +ws:\/\/127\.0\.0\.1:\d+\/run\/run-[0-9a-f]+\/vnc/);
  });

  it('crawl-search-prompt.ts crawls, searches and answers', async () => {
    const { stdout } = await example('crawl-search-prompt.ts', [`${site.origin}/`, 'How much is the subscription?']);
    expect(stdout).toMatch(/crawl [0-9a-f-]{36}: \d+ pages/);
    expect(stdout).toMatch(/1\. http:\/\/127\.0\.0\.1:\d+\/docs\/7: /);
    expect(stdout).toContain('42 euros');
    expect(stdout).toMatch(/\[1\] http:\/\/127\.0\.0\.1:\d+\/docs\/7/);
  });

  it.each(['webhook-express.ts', 'webhook-hono.ts'])(
    '%s verifies and prints deliveries, and refuses unsigned ones',
    async (file) => {
      const receiver = await startUntil(['--import', 'tsx', `examples/${file}`, '0'], /listening on \S+/, {
        cwd: root,
        env: { ...env, SIGNING_SECRET: 'whsec-example-1' },
        timeout: 30_000,
      });
      const url = /listening on (\S+)/.exec(receiver.output())?.[1] ?? '';
      const signed = signDelivery({
        body: crawlBody('crawler_finished', 'c'),
        secret: 'whsec-example-1',
        resourceType: 'crawl',
        contentEncoding: 'br',
      });
      expect(
        (await fetch(url, { method: 'POST', headers: signed.headers, body: new Uint8Array(signed.body) })).status,
      ).toBe(200);
      expect(
        (
          await fetch(url, {
            method: 'POST',
            headers: {
              ...signed.headers,
              'x-service-webhook-signature': '0'.repeat(64),
              'x-service-webhook-signature-lowercase': '0'.repeat(64),
            },
            body: new Uint8Array(signed.body),
          })
        ).status,
      ).toBe(401);
      await receiver.stop();
      const out = receiver.output();
      expect(out).toContain('delivery crawl crawler_finished');
      expect(out.match(/delivery/g)).toHaveLength(1);
    },
    40_000,
  );
});
