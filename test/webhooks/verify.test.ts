import { createHmac } from 'node:crypto';
import { Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  RESOURCE_TYPES,
  type ResourceType,
  signDelivery,
  verifyDelivery,
  type WebhookError,
} from '../../packages/cloud-browser/src/webhooks/index.js';

const SECRET = 'whsec-first-0123456789';
const SECOND = 'whsec-second-9876543210';
const NOW = 1_800_000_000_000;
const body = Buffer.from(JSON.stringify({ event: 'crawler_finished', crawler_uuid: 'c-1', items: [1, 2, 3] }));

// Computed here with node:crypto, independently of the library.
const hmac = (secret: string, data: Buffer | string) => createHmac('sha256', secret).update(data).digest('hex');

async function status(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (e) {
    return (e as WebhookError).status ?? -1;
  }
}

const base = (resourceType: string, signature: string, extra: Record<string, string> = {}) => ({
  'x-service-webhook-resource-type': resourceType,
  'x-service-webhook-signature': signature,
  ...extra,
});

describe('verifyDelivery accepts what the service signs', () => {
  const encodings: [string, (b: Buffer) => Buffer][] = [
    ['identity', (b) => b],
    ['gzip', (b) => zlib.gzipSync(b)],
    ['x-gzip', (b) => zlib.gzipSync(b)],
    ['deflate', (b) => zlib.deflateSync(b)],
    ['br', (b) => zlib.brotliCompressSync(b)],
    ['gzip, br', (b) => zlib.brotliCompressSync(zlib.gzipSync(b))],
    ['deflate, gzip', (b) => zlib.gzipSync(zlib.deflateSync(b))],
  ];
  const types = RESOURCE_TYPES.filter((t) => t !== 'alert');
  const cases = types.flatMap((type) =>
    encodings.flatMap(([encoding, encode]) =>
      (['upper', 'lower'] as const).flatMap((kase) =>
        (['x-service-webhook-signature', 'x-service-webhook-signature-lowercase'] as const).map(
          (header) => [type, encoding, kase, header, encode] as const,
        ),
      ),
    ),
  );

  it.each(cases)('%s body, Content-Encoding %s, %s-case digest in %s', async (type, encoding, kase, header, encode) => {
    const digest = hmac(SECRET, body);
    const headers = {
      'x-service-webhook-resource-type': type,
      [header]: kase === 'upper' ? digest.toUpperCase() : digest,
      'content-encoding': encoding,
    };
    const result = await verifyDelivery({ headers, body: encode(body), secrets: SECRET });
    expect(result).toMatchObject({ resourceType: type, ping: false });
    expect(result.body?.equals(body)).toBe(true);
  });

  it('accepts a signature over the bytes as received, and over the decoded body, in one pass (D14)', async () => {
    const gz = zlib.gzipSync(body);
    const stacked = zlib.brotliCompressSync(zlib.gzipSync(body));
    for (const [wire, encoding] of [
      [gz, 'gzip'],
      [stacked, 'gzip, br'],
    ] as const) {
      for (const signed of [wire, body]) {
        for (const secret of [SECRET, SECOND]) {
          const headers = base('crawl', hmac(secret, signed).toUpperCase(), { 'content-encoding': encoding });
          const got = await verifyDelivery({ headers, body: Readable.from([wire]), secrets: [SECRET, SECOND] });
          expect(got.body).toEqual(body);
        }
      }
    }
    // Neither: a signature over some other bytes.
    const wrong = base('crawl', hmac(SECRET, zlib.gzipSync(Buffer.from('other'))), { 'content-encoding': 'gzip' });
    expect(await status(verifyDelivery({ headers: wrong, body: gz, secrets: SECRET }))).toBe(401);
  });

  it("reads the headers under another prefix, the live service's", async () => {
    const live = {
      'x-scrapfly-webhook-resource-type': 'crawl',
      'x-scrapfly-webhook-signature': hmac(SECRET, body).toUpperCase(),
    };
    const got = await verifyDelivery({ headers: live, body, secrets: SECRET, headerPrefix: 'X-Scrapfly-Webhook-' });
    expect(got).toMatchObject({ resourceType: 'crawl', body });
    const signed = signDelivery({
      body,
      secret: SECRET,
      resourceType: 'alert',
      timestamp: NOW / 1000,
      headerPrefix: 'X-Scrapfly-Webhook-',
    });
    expect(
      Object.keys(signed.headers)
        .filter((h) => h.startsWith('x-scrapfly-webhook-'))
        .sort(),
    ).toEqual([
      'x-scrapfly-webhook-resource-type',
      'x-scrapfly-webhook-signature',
      'x-scrapfly-webhook-signature-lowercase',
      'x-scrapfly-webhook-timestamp',
    ]);
    const alert = await verifyDelivery({
      headers: signed.headers,
      body: signed.body,
      secrets: SECRET,
      headerPrefix: 'X-Scrapfly-Webhook-',
      now: () => NOW,
    });
    expect(alert.body).toEqual(body);
    // The spec's receiver meets a live delivery: a 400 that says which option to set.
    const error = (await verifyDelivery({ headers: live, body, secrets: SECRET }).catch((e) => e)) as WebhookError;
    expect(error.status).toBe(400);
    expect(error.message).toContain('headerPrefix: X-Scrapfly-Webhook-');
  });

  it.each([
    ['no trailing dash', 'X-Scrapfly-Webhook'],
    ['a space', 'X-Scrapfly Webhook-'],
    ['nothing', ''],
  ])('refuses a header prefix with %s', async (_name, headerPrefix) => {
    const error = (await verifyDelivery({ headers: {}, body, secrets: SECRET, headerPrefix }).catch((e) => e)) as Error;
    expect(error.name).toBe('ConfigError');
    expect(error.message).toContain('`headerPrefix` must be letters, digits and dashes ending with a dash');
  });

  it('refuses knobs that are not finite numbers in range', async () => {
    const error = (await verifyDelivery({
      headers: {},
      body,
      secrets: SECRET,
      maxBodyBytes: Number.NaN,
      toleranceSeconds: -1,
    }).catch((e) => e)) as Error;
    expect(error.message).toContain('`maxBodyBytes` must be a whole number of bytes');
    expect(error.message).toContain('`toleranceSeconds` must be a whole number of seconds, from 0');
  });

  it('accepts a delivery signed with the second of several secrets', async () => {
    const result = await verifyDelivery({
      headers: base('crawl', hmac(SECOND, body)),
      body,
      secrets: [SECRET, SECOND],
    });
    expect(result.body?.equals(body)).toBe(true);
  });

  it('accepts when either header matches, even if the other does not', async () => {
    const headers = {
      ...base('crawl', 'ab'.repeat(32)),
      'x-service-webhook-signature-lowercase': hmac(SECRET, body),
    };
    expect(await status(verifyDelivery({ headers, body, secrets: SECRET }))).toBe(200);
  });

  it('reads a fetch Headers object, a Node stream and a web stream', async () => {
    const headers = new Headers(base('scrape', hmac(SECRET, body)));
    const chunks = [body.subarray(0, 5), body.subarray(5)];
    for (const source of [Readable.from(chunks), Readable.toWeb(Readable.from(chunks)) as ReadableStream<Uint8Array>]) {
      const result = await verifyDelivery({ headers, body: source, secrets: SECRET });
      expect(result.body?.equals(body)).toBe(true);
    }
  });

  it('signs alerts over the timestamp, a dot and the body', async () => {
    const stamp = String(NOW / 1000 - 120);
    const headers = base('alert', hmac(SECRET, `${stamp}.${body}`), { 'x-service-webhook-timestamp': stamp });
    expect(await status(verifyDelivery({ headers, body, secrets: SECRET, now: () => NOW }))).toBe(200);
    const unsignedStamp = base('alert', hmac(SECRET, body), { 'x-service-webhook-timestamp': stamp });
    expect(await status(verifyDelivery({ headers: unsignedStamp, body, secrets: SECRET, now: () => NOW }))).toBe(401);
  });

  it('hands nothing over for an unsigned ping', async () => {
    const result = await verifyDelivery({
      headers: { 'x-service-webhook-resource-type': 'ping' },
      body: 'hi',
      secrets: SECRET,
    });
    expect(result).toEqual({ resourceType: 'ping', ping: true });
  });

  it('verifies a signed ping like any delivery', async () => {
    const result = await verifyDelivery({ headers: base('ping', hmac(SECRET, body)), body, secrets: SECRET });
    expect(result.ping).toBe(false);
    const wrong = base('ping', hmac(SECOND, body));
    expect(await status(verifyDelivery({ headers: wrong, body, secrets: SECRET }))).toBe(401);
  });

  it('agrees with signDelivery for every resource type and encoding', async () => {
    for (const resourceType of RESOURCE_TYPES as readonly ResourceType[]) {
      for (const contentEncoding of ['identity', 'gzip', 'deflate', 'br', ['gzip', 'br']] as const) {
        const signed = signDelivery({ body, secret: SECRET, resourceType, contentEncoding, timestamp: NOW / 1000 });
        expect(signed.headers['x-service-webhook-signature-lowercase']).toBe(
          hmac(SECRET, resourceType === 'alert' ? `${NOW / 1000}.${body}` : body),
        );
        const result = await verifyDelivery({
          headers: signed.headers,
          body: signed.body,
          secrets: SECRET,
          now: () => NOW,
        });
        expect(result.body?.equals(body)).toBe(true);
      }
    }
  });
});

describe('verifyDelivery refuses, with the status to answer', () => {
  const good = hmac(SECRET, body);
  const gz = zlib.gzipSync(body);
  it.each<[string, Record<string, string>, Buffer | string, number, (string | undefined)?]>([
    ['a missing resource type', { 'x-service-webhook-signature': good }, body, 400],
    ['an unknown resource type', base('crawler', good), body, 400],
    ['an unknown Content-Encoding', base('crawl', good, { 'content-encoding': 'compress' }), body, 400],
    ['a truncated gzip body', base('crawl', good, { 'content-encoding': 'gzip' }), gz.subarray(0, gz.length - 6), 400],
    [
      'a corrupt gzip body',
      base('crawl', good, { 'content-encoding': 'gzip' }),
      Buffer.concat([gz.subarray(0, 12), Buffer.alloc(20, 7)]),
      400,
    ],
    [
      'trailing garbage after gzip',
      base('crawl', good, { 'content-encoding': 'gzip' }),
      Buffer.concat([gz, Buffer.from('junk')]),
      400,
    ],
    [
      'trailing garbage after brotli',
      base('crawl', good, { 'content-encoding': 'br' }),
      Buffer.concat([zlib.brotliCompressSync(body), Buffer.from('junk')]),
      400,
    ],
    ['a body that says gzip but is not', base('crawl', good, { 'content-encoding': 'gzip' }), body, 400],
    ['a missing signature', { 'x-service-webhook-resource-type': 'crawl' }, body, 401],
    ['a malformed signature', base('crawl', 'not-hex'), body, 401],
    ['a 63-character signature', base('crawl', good.slice(1)), body, 401],
    ['a signature by another secret', base('crawl', hmac('other-secret', body)), body, 401],
    ['a tampered body', base('crawl', good), Buffer.concat([body, Buffer.from(' ')]), 401],
    ['an alert without a timestamp', base('alert', good), body, 401],
    [
      'an alert with a timestamp that is not digits',
      base('alert', good, { 'x-service-webhook-timestamp': '1.5e9' }),
      body,
      401,
    ],
    [
      'a stale alert',
      base('alert', hmac(SECRET, `${NOW / 1000 - 301}.${body}`), {
        'x-service-webhook-timestamp': String(NOW / 1000 - 301),
      }),
      body,
      401,
    ],
    [
      'an alert from the future',
      base('alert', hmac(SECRET, `${NOW / 1000 + 301}.${body}`), {
        'x-service-webhook-timestamp': String(NOW / 1000 + 301),
      }),
      body,
      401,
    ],
  ])('refuses %s', async (_name, headers, payload, expected) => {
    expect(await status(verifyDelivery({ headers, body: payload, secrets: SECRET, now: () => NOW }))).toBe(expected);
  });

  it('refuses a body over the limit on the wire, from Content-Length, before reading', async () => {
    let pulled = 0;
    const source = new Readable({
      read() {
        pulled++;
        this.push(null);
      },
    });
    const headers = base('crawl', good, { 'content-length': '2000' });
    expect(await status(verifyDelivery({ headers, body: source, secrets: SECRET, maxBodyBytes: 1000 }))).toBe(413);
    expect(pulled).toBe(0);
  });

  it('refuses a streamed body over the limit on the wire', async () => {
    const big = Buffer.alloc(5000, 1);
    const headers = base('crawl', hmac(SECRET, big));
    expect(
      await status(verifyDelivery({ headers, body: Readable.from([big]), secrets: SECRET, maxBodyBytes: 4096 })),
    ).toBe(413);
  });

  it('refuses a body that grows over the limit once decoded', async () => {
    const big = Buffer.alloc(100_000);
    const headers = base('crawl', hmac(SECRET, big), { 'content-encoding': 'gzip' });
    expect(
      await status(verifyDelivery({ headers, body: zlib.gzipSync(big), secrets: SECRET, maxBodyBytes: 50_000 })),
    ).toBe(413);
  });

  it('honours a custom tolerance for alerts', async () => {
    const stamp = String(NOW / 1000 - 100);
    const headers = base('alert', hmac(SECRET, `${stamp}.${body}`), { 'x-service-webhook-timestamp': stamp });
    expect(await status(verifyDelivery({ headers, body, secrets: SECRET, now: () => NOW, toleranceSeconds: 60 }))).toBe(
      401,
    );
  });

  it('decodes a highly compressible body that it had to keep compressed, exactly', async () => {
    // 24 MiB of a repeated line: past the size where only wire bytes are kept, so the body is
    // decoded a second time after the signature matched.
    const line = Buffer.from('{"url":"http://127.0.0.1/page","status":200}\n');
    const big = Buffer.alloc(24 << 20);
    for (let at = 0; at < big.length; at += line.length) line.copy(big, at);
    const headers = base('crawl', hmac(SECRET, big), { 'content-encoding': 'gzip' });
    const result = await verifyDelivery({ headers, body: zlib.gzipSync(big), secrets: SECRET });
    expect(result.body?.equals(big)).toBe(true);
  });

  it('requires at least one secret', async () => {
    await expect(verifyDelivery({ headers: base('crawl', good), body, secrets: [] })).rejects.toThrow(/`secrets`/);
    await expect(verifyDelivery({ headers: base('crawl', good), body, secrets: [undefined, ''] })).rejects.toThrow(
      /`secrets`/,
    );
  });

  it('passes over a rotation entry left unset (process.env.OLD_SIGNING_SECRET undefined)', async () => {
    const unset: string | undefined = undefined;
    const result = await verifyDelivery({ headers: base('crawl', good), body, secrets: [SECRET, unset] });
    expect(result.resourceType).toBe('crawl');
  });
});
