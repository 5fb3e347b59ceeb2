/**
 * The runtime-free receiver (`cloud-browser/webhooks/web`): bundled for the browser platform
 * (a Node built-in anywhere in its graph fails the bundle), then run inside a real Chromium page
 * on real signed deliveries, as a worker or edge function would run it; and the same module on
 * Node's own Web APIs.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ContentEncoding,
  type SignOptions,
  signDelivery,
} from '../../packages/cloud-browser/src/webhooks/sign.js';
import { createWebhookHandler, type WebDelivery } from '../../packages/cloud-browser/src/webhooks/web.js';
import { findChromium } from '../../packages/emulator/src/chromium.js';

const SECRET = 'whsec-web-receiver-1';
const OLD_SECRET = 'whsec-web-receiver-0';
const NOW = 1_800_000_000;

let bundle = '';
let server: Server;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('../../packages/cloud-browser/src/webhooks/web.ts', import.meta.url))],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    logLevel: 'silent',
  });
  bundle = result.outputFiles[0]?.text ?? '';
  server = createServer((req, res) => {
    if (req.url === '/web.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    } else {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<title>receiver</title>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  browser = await chromium.launch({ executablePath: await findChromium(), args: ['--no-sandbox'] });
  page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  // As a string: the test runner rewrites import() in functions it compiles.
  await page.evaluate("import('/web.js').then((m) => { window.receiver = m; })");
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
});

interface Outcome {
  status: number;
  text: string;
  delivered: { resourceType: string; text: string }[];
}

/** POST a delivery to the bundled receiver inside the page, its body streamed. */
function inChromium(headers: Record<string, string>, body: Uint8Array, maxBodyBytes?: number): Promise<Outcome> {
  return page.evaluate(
    async ({ headers, bytes, secrets, now, maxBodyBytes }) => {
      const { createWebhookHandler } = (
        window as unknown as { receiver: typeof import('../../packages/cloud-browser/src/webhooks/web.js') }
      ).receiver;
      const delivered: { resourceType: string; text: string }[] = [];
      const handler = createWebhookHandler({
        secrets,
        now: () => now * 1000,
        maxBodyBytes,
        onDelivery: (d) => {
          delivered.push({ resourceType: d.resourceType, text: d.text() });
        },
      });
      const data = Uint8Array.from(bytes);
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < data.length; at += 1000) controller.enqueue(data.subarray(at, at + 1000));
          controller.close();
        },
      });
      const request = new Request(`${location.origin}/webhook`, {
        method: 'POST',
        headers,
        body: stream,
        duplex: 'half',
      } as RequestInit);
      const response = await handler(request);
      return { status: response.status, text: await response.text(), delivered };
    },
    { headers, bytes: [...body], secrets: [OLD_SECRET, SECRET], now: NOW, maxBodyBytes },
  );
}

/** The same receiver on Node's Web APIs. */
async function inNode(headers: Record<string, string>, body: Uint8Array, maxBodyBytes?: number): Promise<Outcome> {
  const delivered: { resourceType: string; text: string }[] = [];
  const handler = createWebhookHandler({
    secrets: [OLD_SECRET, SECRET],
    now: () => NOW * 1000,
    maxBodyBytes,
    onDelivery: (d: WebDelivery) => {
      delivered.push({ resourceType: d.resourceType, text: d.text() });
    },
  });
  const response = await handler(
    new Request('http://127.0.0.1/webhook', { method: 'POST', headers, body: body as BodyInit }),
  );
  return { status: response.status, text: await response.text(), delivered };
}

const payload = { event: 'crawler_finished', payload: { crawler_uuid: 'c-1', urls: ['https://a.example/é'] } };
const sign = (o: Partial<SignOptions> = {}) =>
  signDelivery({ body: payload, secret: SECRET, resourceType: 'crawl', ...o });

describe.each([
  ['inside Chromium (bundled for the browser platform)', inChromium],
  ["on Node's Web APIs", inNode],
] as const)('the web receiver %s', (_where, post) => {
  it.each([['identity'], ['gzip'], ['x-gzip'], ['deflate']] as const)(
    'verifies and decodes a %s delivery, and hands it over once',
    async (encoding) => {
      const { headers, body } = sign({ contentEncoding: encoding as ContentEncoding });
      const outcome = await post(headers, body);
      expect(outcome).toEqual({
        status: 200,
        text: '',
        delivered: [{ resourceType: 'crawl', text: JSON.stringify(payload) }],
      });
    },
  );

  it('verifies an alert against its timestamp, and refuses a stale one', async () => {
    const fresh = sign({ resourceType: 'alert', timestamp: NOW - 10 });
    expect((await post(fresh.headers, fresh.body)).status).toBe(200);
    const stale = sign({ resourceType: 'alert', timestamp: NOW - 3600 });
    const outcome = await post(stale.headers, stale.body);
    expect([outcome.status, outcome.text, outcome.delivered]).toEqual([
      401,
      'the alert timestamp is 3600 s from now, more than 300 s',
      [],
    ]);
  });

  it('refuses a delivery signed by another secret, and a body changed on the way', async () => {
    const other = signDelivery({ body: payload, secret: 'someone-else', resourceType: 'crawl' });
    expect(await post(other.headers, other.body)).toEqual({
      status: 401,
      text: 'the signature matches none of the signing secrets',
      delivered: [],
    });
    const { headers, body } = sign();
    const changed = Uint8Array.from(body);
    changed[10] = (changed[10] ?? 0) ^ 1;
    expect((await post(headers, changed)).status).toBe(401);
  });

  it('answers an unsigned ping 200 and hands nothing over', async () => {
    const outcome = await post({ 'X-Service-Webhook-Resource-Type': 'ping' }, new Uint8Array(0));
    expect(outcome).toEqual({ status: 200, text: '', delivered: [] });
  });

  it('refuses a body over the limit on the wire and once decoded (413), and trailing data (400)', async () => {
    const big = sign({ body: 'x'.repeat(5000) });
    expect((await post(big.headers, big.body, 4000)).status).toBe(413);
    const bomb = sign({ body: 'x'.repeat(50_000), contentEncoding: 'gzip' });
    const outcome = await post(bomb.headers, bomb.body, 10_000);
    expect([outcome.status, outcome.text]).toEqual([
      413,
      "the body is larger than 10000 bytes once decoded: the receiver's limit is maxBodyBytes",
    ]);
    const gz = sign({ contentEncoding: 'gzip' });
    const trailing = new Uint8Array([...gz.body, 1, 2, 3]);
    expect((await post({ ...gz.headers, 'content-length': String(trailing.length) }, trailing)).status).toBe(400);
  });

  it('names an encoding it cannot undo (zstd, unknown) with a 400', async () => {
    const { headers, body } = sign();
    const outcome = await post({ ...headers, 'content-encoding': 'zstd' }, body);
    expect(outcome.status).toBe(400);
    expect(outcome.text).toContain('Content-Encoding "zstd" is not supported');
  });
});

describe('brotli, where the runtime decodes it', () => {
  it.each([
    ['Chromium', inChromium],
    ['Node', inNode],
  ] as const)('%s: br verified when its DecompressionStream has brotli, else a 400 naming br', async (where, post) => {
    const supported =
      where === 'Chromium'
        ? await page.evaluate(() => {
            try {
              new DecompressionStream('brotli' as CompressionFormat);
              return true;
            } catch {
              return false;
            }
          })
        : (() => {
            try {
              new DecompressionStream('brotli' as CompressionFormat);
              return true;
            } catch {
              return false;
            }
          })();
    const { headers, body } = sign({ contentEncoding: 'br' });
    const outcome = await post(headers, body);
    if (supported) expect(outcome.status).toBe(200);
    else
      expect([outcome.status, outcome.text]).toEqual([
        400,
        expect.stringContaining('Content-Encoding "br" is not supported'),
      ]);
    console.info(`brotli in ${where}: ${supported ? 'supported' : 'not supported'}`);
  });
});

it('the browser bundle holds no Node built-in', () => {
  expect(bundle.length).toBeGreaterThan(1000);
  expect(bundle).not.toMatch(/from\s*["']node:|require\(["'](node:)?(crypto|zlib|stream|http|events)["']\)/);
});
