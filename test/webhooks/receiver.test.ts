import { createHmac } from 'node:crypto';
import { Agent, request } from 'node:http';
import * as zlib from 'node:zlib';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createWebhookHandler,
  type Delivery,
  parseCrawlEvent,
  RESOURCE_TYPES,
  serveWebhooks,
  signDelivery,
  type WebhookServer,
} from '../../packages/cloud-browser/src/webhooks/index.js';
import { crawlBody } from '../support/deliveries.js';

const SECRET = 'whsec-receiver-123456';
const servers: WebhookServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(onDelivery: (d: Delivery) => void | Promise<void>) {
  const s = await serveWebhooks({ port: 0, secrets: SECRET, onDelivery });
  servers.push(s);
  return s;
}

function post(url: string, headers: Record<string, string>, body: Buffer | string, method = 'POST', agent?: Agent) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(url, { method, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('serveWebhooks, the reference receiver', () => {
  it('answers 200 with an empty body and hands the delivery over once', async () => {
    const got: Delivery[] = [];
    const receiver = await serve((d) => {
      got.push(d);
    });
    const signed = signDelivery({
      body: crawlBody('crawler_started', 'u1'),
      secret: SECRET,
      resourceType: 'crawl',
      contentEncoding: 'gzip',
    });
    expect(await post(receiver.url, signed.headers, signed.body)).toEqual({ status: 200, body: '' });
    expect(got).toHaveLength(1);
    expect(got[0]?.resourceType).toBe('crawl');
    expect(parseCrawlEvent(got[0]?.body ?? '')).toEqual(crawlBody('crawler_started', 'u1'));
    expect(got[0]?.json()).toEqual(crawlBody('crawler_started', 'u1'));
  });

  it('answers 500 when the application fails, and 200 to an unsigned ping without calling it', async () => {
    let calls = 0;
    const receiver = await serve(() => {
      calls++;
      throw new Error('database down');
    });
    const signed = signDelivery({ body: 'x', secret: SECRET, resourceType: 'scrape' });
    expect((await post(receiver.url, signed.headers, signed.body)).status).toBe(500);
    expect(calls).toBe(1);
    expect(await post(receiver.url, { 'x-service-webhook-resource-type': 'ping' }, '{}')).toEqual({
      status: 200,
      body: '',
    });
    expect(calls).toBe(1);
  });

  it('answers 405 to other methods and 404 to other paths', async () => {
    const receiver = await serve(() => {});
    expect((await post(receiver.url, {}, '', 'GET')).status).toBe(405);
    expect((await post(receiver.url.replace('/webhook', '/other'), {}, '')).status).toBe(404);
  });

  it('answers 401 to an unsigned delivery and 400 to an unknown type', async () => {
    const receiver = await serve(() => {});
    expect((await post(receiver.url, { 'x-service-webhook-resource-type': 'crawl' }, '{}')).status).toBe(401);
    expect((await post(receiver.url, { 'x-service-webhook-resource-type': 'nope' }, '{}')).status).toBe(400);
  });

  it('delivers 10,000 signed deliveries at concurrency 64, each exactly once, all answered 200', async () => {
    const seen = new Map<number, number>();
    const receiver = await serve((d) => {
      const { id } = d.json<{ id: number }>();
      seen.set(id, (seen.get(id) ?? 0) + 1);
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < 10_000) {
        const id = next++;
        const signed = signDelivery({
          body: { event: 'crawler_url_visited', id },
          secret: SECRET,
          resourceType: 'crawl',
          contentEncoding: id % 2 ? 'gzip' : 'identity',
        });
        const { status } = await post(receiver.url, signed.headers, signed.body, 'POST', agent);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    agent.destroy();
    expect(Object.fromEntries(statuses)).toEqual({ 200: 10_000 });
    expect(seen.size).toBe(10_000);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  }, 120_000);
});

describe('createWebhookHandler, for fetch-style runtimes', () => {
  it('verifies a Request and answers a Response', async () => {
    const got: string[] = [];
    const handler = createWebhookHandler({ secrets: [SECRET], onDelivery: (d) => void got.push(d.body.toString()) });
    const signed = signDelivery({ body: 'hello', secret: SECRET, resourceType: 'screenshot', contentEncoding: 'br' });
    const ok = await handler(
      new Request('http://x/webhook', { method: 'POST', headers: signed.headers, body: new Uint8Array(signed.body) }),
    );
    expect([ok.status, await ok.text()]).toEqual([200, '']);
    expect(got).toEqual(['hello']);
    const bad = await handler(
      new Request('http://x/webhook', {
        method: 'POST',
        headers: {
          ...signed.headers,
          'x-service-webhook-signature': '00'.repeat(32),
          'x-service-webhook-signature-lowercase': '00'.repeat(32),
        },
        body: new Uint8Array(signed.body),
      }),
    );
    expect(bad.status).toBe(401);
    expect(await bad.text()).not.toContain(SECRET);
  });
});

describe('no header soup or body gets past the receiver unsigned', () => {
  const OTHER = 'whsec-other-999999';
  const encoders: Record<string, (b: Buffer) => Buffer> = {
    '': (b) => b,
    identity: (b) => b,
    gzip: (b) => zlib.gzipSync(b),
    deflate: (b) => zlib.deflateSync(b),
    br: (b) => zlib.brotliCompressSync(b),
    'gzip, br': (b) => zlib.brotliCompressSync(zlib.gzipSync(b)),
  };
  const decoders: Record<string, (b: Buffer) => Buffer> = {
    gzip: (b) => zlib.gunzipSync(b),
    deflate: (b) => zlib.inflateSync(b),
    br: (b) => zlib.brotliDecompressSync(b),
    'gzip, br': (b) => zlib.gunzipSync(zlib.brotliDecompressSync(b)),
  };
  /** What the bytes on the wire decode to under the declared encoding (D16), if they decode at all. */
  const decodedWire = (encoding: string, wire: Buffer): Buffer | undefined => {
    try {
      return (decoders[encoding] ?? ((b: Buffer) => b))(wire);
    } catch {
      return undefined;
    }
  };
  const soup = fc.record({
    type: fc.oneof(fc.constantFrom(...RESOURCE_TYPES), fc.string({ maxLength: 12 }), fc.constant(undefined)),
    signer: fc.constantFrom('right', 'other', 'random', 'garbage', 'none'),
    header: fc.constantFrom('upper', 'lower', 'both'),
    encoding: fc.constantFrom('', 'identity', 'gzip', 'deflate', 'br', 'gzip, br', 'compress', 'gzip;q=1'),
    encodeAs: fc.constantFrom('', 'identity', 'gzip', 'deflate', 'br', 'gzip, br'),
    stamp: fc.oneof(
      fc.constant(undefined),
      fc.integer({ min: -1000, max: 1000 }).map((d) => String(1_800_000_000 + d)),
      fc.string({ maxLength: 6 }),
    ),
    body: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
    corrupt: fc.boolean(),
  });

  it('always answers 200, 400, 401, 413 or 500, and hands over only what the right secret signed', async () => {
    await fc.assert(
      fc.asyncProperty(soup, async (s) => {
        const handed: Delivery[] = [];
        const handler = createWebhookHandler({
          secrets: [SECRET],
          maxBodyBytes: 200_000,
          now: () => 1_800_000_000_000,
          onDelivery: (d) => {
            handed.push(d);
            if (d.body.length === 7) throw new Error('the application rejects bodies of 7 bytes');
          },
        });
        const message = s.type === 'alert' ? Buffer.concat([Buffer.from(`${s.stamp ?? ''}.`), s.body]) : s.body;
        const digest =
          s.signer === 'right'
            ? createHmac('sha256', SECRET).update(message).digest('hex')
            : s.signer === 'other'
              ? createHmac('sha256', OTHER).update(message).digest('hex')
              : s.signer === 'random'
                ? 'ab'.repeat(32)
                : 'zz-not-a-digest';
        const headers: Record<string, string> = {};
        if (s.type !== undefined) headers['x-service-webhook-resource-type'] = s.type;
        if (s.signer !== 'none') {
          if (s.header !== 'lower') headers['x-service-webhook-signature'] = digest.toUpperCase();
          if (s.header !== 'upper') headers['x-service-webhook-signature-lowercase'] = digest;
        }
        if (s.encoding) headers['content-encoding'] = s.encoding;
        if (s.stamp !== undefined) headers['x-service-webhook-timestamp'] = s.stamp;
        let wire = (encoders[s.encodeAs] ?? ((b: Buffer) => b))(s.body);
        if (s.corrupt && wire.length > 4)
          wire = Buffer.concat([wire.subarray(0, wire.length >> 1), Buffer.from([0xff, 0x00, 0x13])]);
        let validHeaders = true;
        try {
          new Headers(headers);
        } catch {
          validHeaders = false;
        }
        fc.pre(validHeaders);
        const response = await handler(
          new Request('http://x/webhook', { method: 'POST', headers, body: new Uint8Array(wire) }),
        );
        expect([200, 400, 401, 413, 500]).toContain(response.status);
        for (const d of handed) {
          // Whatever reached the application was signed by the right secret, over exactly its body
          // or (D14) over the bytes as received, which then decode to what is handed over: one byte
          // "5" declared `br` is a valid, empty brotli stream.
          expect(s.signer).toBe('right');
          const signedAsReceived = wire.equals(s.body) && d.body.equals(decodedWire(s.encoding, wire) ?? s.body);
          expect(d.body.equals(s.body) || signedAsReceived).toBe(true);
          expect(d.resourceType).toBe(s.type);
        }
        const sameEncoding =
          (s.encoding === 'identity' ? '' : s.encoding) === (s.encodeAs === 'identity' ? '' : s.encodeAs);
        const freshAlert =
          s.type !== 'alert' ||
          (s.stamp !== undefined && /^\d+$/.test(s.stamp) && Math.abs(Number(s.stamp) - 1_800_000_000) <= 300);
        const deliverable =
          s.signer === 'right' &&
          (RESOURCE_TYPES as readonly string[]).includes(s.type ?? '') &&
          sameEncoding &&
          !s.corrupt &&
          freshAlert;
        if (deliverable) {
          expect(handed).toHaveLength(1);
          expect(response.status).toBe(s.body.length === 7 ? 500 : 200);
        }
      }),
      {
        numRuns: 2000,
        // Found by a run (seed 855400015): signed over the raw byte, which `br` decodes to nothing.
        examples: [
          [
            {
              type: 'scrape',
              signer: 'right',
              header: 'upper',
              encoding: 'br',
              encodeAs: '',
              stamp: '',
              body: Buffer.from([53]),
              corrupt: false,
            },
          ],
        ],
      },
    );
  }, 120_000);
});
