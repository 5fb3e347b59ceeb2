/**
 * `cloud-browser/webhooks/web`: the fetch-style receiver with no Node built-in at all, for
 * Cloudflare Workers, Vercel and Netlify edge functions, Deno, Bun and browsers' service workers.
 * HMAC by Web Crypto (`crypto.subtle`), decoding by `DecompressionStream`, bodies as
 * `Uint8Array`. Web Crypto has no incremental HMAC, so a delivery is held whole (wire bytes and
 * decoded body, each within `maxBodyBytes`) before it is verified: on Node, the streaming
 * receivers of `cloud-browser/webhooks` hold less.
 *
 * Encodings: `gzip` and `deflate` wherever `DecompressionStream` exists; `br` where the runtime
 * offers `DecompressionStream('brotli')`; others are answered 400 naming the encoding.
 */
import { isWebhookError, WebhookError } from '../errors.js';
import type { ResourceType } from './constants.js';
import {
  checkHeaders,
  declaredTooLarge,
  encodingsToUndo,
  type PreparedVerifyOptions,
  prepareVerify,
  type ReceiverCheckOptions,
  reader,
  tooLarge,
  unsupportedEncoding,
} from './verify-common.js';

/** A verified delivery, as the web receiver hands it over. */
export interface WebDelivery {
  resourceType: ResourceType;
  /** The decoded body. */
  body: Uint8Array;
  /** The body as UTF-8 text. */
  text(): string;
  /** The body parsed as JSON. */
  json<T = unknown>(): T;
}

/** Options of {@link createWebhookHandler}. */
export interface WebReceiverOptions extends ReceiverCheckOptions {
  /** Called once per verified delivery; a throw or rejection answers 500. */
  onDelivery(delivery: WebDelivery): void | Promise<void>;
  /** Called for each refused delivery, with its status (for logs; never holds a secret). */
  onRefused?: ((error: WebhookError) => void) | undefined;
}

/** What {@link verifyRequest} finds: an unsigned ping, or a verified delivery. */
export type WebVerified = { ping: true } | { ping: false; resourceType: ResourceType; body: Uint8Array };

const FORMATS: Record<string, string> = { gzip: 'gzip', 'x-gzip': 'gzip', deflate: 'deflate', br: 'brotli' };

/** The DecompressionStream format for a Content-Encoding, or the 400 when this runtime has none. */
function formatOf(name: string): string {
  const format = FORMATS[name];
  if (typeof DecompressionStream === 'undefined')
    throw unsupportedEncoding(name, 'this runtime has no DecompressionStream');
  if (!format) throw unsupportedEncoding(name, 'this receiver undoes gzip, deflate and br (where the runtime can)');
  if (!decodable(format))
    throw unsupportedEncoding(name, `this runtime's DecompressionStream cannot undo it (${format})`);
  return format;
}

/** Whether this runtime's DecompressionStream takes `format`, tried once per format. */
const support = new Map<string, boolean>();
function decodable(format: string): boolean {
  let ok = support.get(format);
  if (ok === undefined) {
    try {
      new DecompressionStream(format as CompressionFormat);
      ok = true;
    } catch {
      ok = false;
    }
    support.set(format, ok);
  }
  return ok;
}

/** Read a stream whole, refusing it past `max` bytes (`where` says on the wire or decoded). */
async function readAll(stream: ReadableStream<Uint8Array> | null, max: number, where: string): Promise<Uint8Array> {
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await reader.cancel().catch(() => {});
        throw tooLarge(max, where);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (isWebhookError(error)) throw error;
    throw new WebhookError(
      400,
      `the body could not be ${where === 'on the wire' ? 'read' : 'decoded'}: ${(error as Error).message}`,
    );
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return all;
}

/** Undo the encodings, each through a DecompressionStream, within the limit. */
async function decode(wire: Uint8Array, formats: string[], max: number): Promise<Uint8Array> {
  let body = wire;
  for (const format of formats) {
    const source = new Blob([body as BlobPart]).stream();
    body = await readAll(source.pipeThrough(new DecompressionStream(format as CompressionFormat)), max, 'once decoded');
  }
  return body;
}

const encoder = new TextEncoder();

/** Whether HMAC-SHA256 of `prefix + data` under one of `secrets` is one of `signatures`. */
/** The secrets as HMAC keys, imported once per set of prepared options. */
const keysOf = new WeakMap<readonly string[], Promise<CryptoKey[]>>();
function hmacKeys(secrets: readonly string[]): Promise<CryptoKey[]> {
  let keys = keysOf.get(secrets);
  if (!keys) {
    keys = Promise.all(
      secrets.map((secret) =>
        crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']),
      ),
    );
    keysOf.set(secrets, keys);
  }
  return keys;
}

async function signedBy(
  secrets: readonly string[],
  prefix: string,
  data: Uint8Array,
  signatures: string[],
): Promise<boolean> {
  const head = encoder.encode(prefix);
  const message = head.byteLength === 0 ? data : new Uint8Array(head.byteLength + data.byteLength);
  if (message !== data) {
    message.set(head, 0);
    message.set(data, head.byteLength);
  }
  const expected = signatures.map((hex) => Uint8Array.from(hex.match(/../g) ?? [], (b) => Number.parseInt(b, 16)));
  for (const key of await hmacKeys(secrets)) {
    // subtle.verify compares in constant time.
    for (const signature of expected) {
      if (await crypto.subtle.verify('HMAC', key, signature as BufferSource, message as BufferSource)) return true;
    }
  }
  return false;
}

/**
 * Verify and decode a `Request` with Web APIs only. Throws the {@link WebhookError} to answer
 * (400, 401 or 413).
 *
 * @example
 * const verified = await verifyRequest(prepareVerify({ secrets: env.SIGNING_SECRET }), request)
 */
export async function verifyRequest(options: PreparedVerifyOptions, request: Request): Promise<WebVerified> {
  const header = reader(request.headers);
  const checked = checkHeaders(options, header);
  if (checked.ping) {
    await request.body?.cancel().catch(() => {});
    return { ping: true };
  }
  const max = options.maxBodyBytes;
  declaredTooLarge(header, max);
  const formats = encodingsToUndo(header('content-encoding') ?? undefined).map(formatOf);
  const wire = await readAll(request.body, max, 'on the wire');
  const body = formats.length > 0 ? await decode(wire, formats, max) : wire;
  const { secrets } = options;
  // docs/decisions.md D14: the decoded body is what the service signs; with an encoding, the bytes as received too.
  const ok =
    (await signedBy(secrets, checked.prefix, body, checked.signatures)) ||
    (formats.length > 0 && (await signedBy(secrets, checked.prefix, wire, checked.signatures)));
  if (!ok) throw new WebhookError(401, 'the signature matches none of the signing secrets');
  return { ping: false, resourceType: checked.resourceType, body };
}

const decoder = new TextDecoder();

/**
 * A `(Request) => Promise<Response>` receiver using Web APIs only: 200 with an empty body on
 * success; 400, 401, 413 or 500 with a one-line reason otherwise.
 *
 * @example
 * // Cloudflare Workers
 * export default { fetch: (request, env) => createWebhookHandler({ secrets: env.SIGNING_SECRET, onDelivery }) (request) }
 */
export function createWebhookHandler(options: WebReceiverOptions): (request: Request) => Promise<Response> {
  const prepared = prepareVerify(options);
  const refuse = (error: WebhookError) => {
    options.onRefused?.(error);
    return new Response(error.message, {
      status: error.status,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
  };
  return async (request) => {
    let verified: WebVerified;
    try {
      verified = await verifyRequest(prepared, request);
    } catch (error) {
      if (isWebhookError(error)) return refuse(error);
      return refuse(new WebhookError(500, 'the receiver failed', { cause: error }));
    }
    if (!verified.ping) {
      const { resourceType, body } = verified;
      try {
        await options.onDelivery({
          resourceType,
          body,
          text: () => decoder.decode(body),
          json: <T>() => JSON.parse(decoder.decode(body)) as T,
        });
      } catch (error) {
        return refuse(new WebhookError(500, 'the application failed to handle the delivery', { cause: error }));
      }
    }
    return new Response(null, { status: 200 });
  };
}

export { isWebhookError, WebhookError } from '../errors.js';
export { LIVE_HEADER_PREFIX, RESOURCE_TYPES, type ResourceType } from './constants.js';
export { type PreparedVerifyOptions, prepareVerify, type ReceiverCheckOptions } from './verify-common.js';
