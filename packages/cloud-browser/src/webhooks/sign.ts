/** Signing a delivery exactly as the service sends it (docs/decisions.md D14 to docs/decisions.md D16): for users' tests and the emulator. */
import { createHmac } from 'node:crypto';
import * as zlib from 'node:zlib';
import { ConfigError } from '../errors.js';
import { registerSecret } from '../internal/redact.js';
import { HEADER_PREFIX, headerNames, RESOURCE_TYPES, type ResourceType } from './constants.js';

/** Encodings {@link signDelivery} can apply. */
export type ContentEncoding = 'identity' | 'gzip' | 'x-gzip' | 'deflate' | 'br';

/** What {@link signDelivery} takes. */
export interface SignOptions {
  /** The payload: bytes, text, or a value sent as JSON. */
  body: Uint8Array | string | object;
  secret: string;
  resourceType: ResourceType;
  /** Seconds since the epoch; alerts only. @default now */
  timestamp?: number | undefined;
  /** One encoding or a list, applied in order (`['gzip', 'br']` is sent as `gzip, br`). */
  contentEncoding?: ContentEncoding | readonly ContentEncoding[] | undefined;
  /** The headers' prefix: the spec's, or `X-Scrapfly-Webhook-` as the live service sends. @default 'X-Service-Webhook-' */
  headerPrefix?: string | undefined;
}

/** A delivery ready to POST. */
export interface SignedDelivery {
  headers: Record<string, string>;
  body: Buffer;
}

function encode(name: ContentEncoding, bytes: Buffer): Buffer {
  if (name === 'gzip' || name === 'x-gzip') return zlib.gzipSync(bytes);
  if (name === 'deflate') return zlib.deflateSync(bytes);
  if (name === 'br') return zlib.brotliCompressSync(bytes);
  return bytes;
}

/**
 * Sign and encode a delivery as the service would: HMAC-SHA256 of the body (for alerts, of
 * `timestamp.body`) under `secret`, hex, in upper case and in lower case, then the
 * Content-Encoding applied.
 *
 * @example
 * const { headers, body } = signDelivery({ body: { event: 'crawler_finished' }, secret, resourceType: 'crawl', contentEncoding: 'gzip' });
 * await fetch(receiverUrl, { method: 'POST', headers, body });
 */
export function signDelivery(options: SignOptions): SignedDelivery {
  if (!(RESOURCE_TYPES as readonly string[]).includes(options.resourceType)) {
    throw new ConfigError('delivery', [
      { option: 'resourceType', message: `\`resourceType\` must be one of ${RESOURCE_TYPES.join(', ')}` },
    ]);
  }
  if (typeof options.secret !== 'string' || options.secret.length === 0) {
    throw new ConfigError('delivery', [{ option: 'secret', message: '`secret` must be the non-empty signing secret' }]);
  }
  if (options.headerPrefix !== undefined && !HEADER_PREFIX.test(options.headerPrefix)) {
    throw new ConfigError('delivery', [
      {
        option: 'headerPrefix',
        message: '`headerPrefix` must be letters, digits and dashes ending with a dash, such as X-Scrapfly-Webhook-',
      },
    ]);
  }
  const names = headerNames(options.headerPrefix);
  registerSecret(options.secret);
  const raw = options.body;
  const bytes =
    typeof raw === 'string'
      ? Buffer.from(raw)
      : raw instanceof Uint8Array
        ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
        : Buffer.from(JSON.stringify(raw));
  const hmac = createHmac('sha256', options.secret);
  const headers: Record<string, string> = {
    'content-type':
      typeof raw === 'object' && !(raw instanceof Uint8Array) ? 'application/json' : 'application/octet-stream',
    [names.resourceType]: options.resourceType,
  };
  if (options.resourceType === 'alert') {
    const stamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    headers[names.timestamp] = stamp;
    hmac.update(`${stamp}.`);
  }
  const digest = hmac.update(bytes).digest('hex');
  headers[names.signature] = digest.toUpperCase();
  headers[names.signatureLowercase] = digest;
  const encodings =
    options.contentEncoding === undefined
      ? []
      : typeof options.contentEncoding === 'string'
        ? [options.contentEncoding]
        : [...options.contentEncoding];
  let body = bytes;
  for (const name of encodings) body = encode(name, body);
  if (encodings.length > 0) headers['content-encoding'] = encodings.join(', ');
  headers['content-length'] = String(body.length);
  return { headers, body };
}
