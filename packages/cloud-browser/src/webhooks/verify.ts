/**
 * Verifying a delivery (docs/wire.md §4 receiver rules, docs/decisions.md D14 to docs/decisions.md D16): resource type, signature over
 * the decoded body or the bytes as received under any of several secrets, alert timestamps,
 * Content-Encoding, and the size limit on the wire and decoded, all in one streaming pass that
 * holds no more than the limit.
 */
import { createHmac, type Hmac, timingSafeEqual } from 'node:crypto';
import { Readable, type Transform } from 'node:stream';
import * as zlib from 'node:zlib';
import { WebhookError } from '../errors.js';
import type { ResourceType } from './constants.js';
import {
  checkHeaders,
  declaredTooLarge,
  encodingsToUndo,
  type HeadersInput,
  type PreparedVerifyOptions,
  prepareVerify,
  type ReceiverCheckOptions,
  reader,
  tooLarge,
  unsupportedEncoding,
} from './verify-common.js';

export { type HeadersInput, type PreparedVerifyOptions, prepareVerify } from './verify-common.js';

/** A body as bytes, a Node stream or a web stream. */
export type BodyInput =
  | Uint8Array
  | ArrayBuffer
  | string
  | NodeJS.ReadableStream
  | ReadableStream<Uint8Array>
  | null
  | undefined;

/** What {@link verifyDelivery} takes. */
export interface VerifyOptions extends ReceiverCheckOptions {
  headers: HeadersInput;
  body: BodyInput;
}

/** A verified delivery: its resource type and decoded body. */
export type VerifiedDelivery =
  | { resourceType: ResourceType; body: Buffer; ping: false }
  | { resourceType: 'ping'; body?: undefined; ping: true };

// Larger output chunks than zlib's 16 KiB default: fewer events, HMAC updates and copies.
const ZLIB_OPTIONS = { chunkSize: 256 * 1024 };

/** A zlib decoder: a Transform that counts the input it consumed. */
type Decoder = Transform & { readonly bytesWritten: number };

/** The decoders that undo a Content-Encoding list, last applied first (docs/decisions.md D16). */
function decodersFor(header: string | undefined): (() => Decoder)[] {
  return encodingsToUndo(header).map((name) => {
    if (name === 'gzip' || name === 'x-gzip') return () => zlib.createGunzip(ZLIB_OPTIONS);
    if (name === 'deflate') return () => zlib.createInflate(ZLIB_OPTIONS);
    if (name === 'br') return () => zlib.createBrotliDecompress(ZLIB_OPTIONS);
    const zstd = (zlib as unknown as { createZstdDecompress?: () => Decoder }).createZstdDecompress;
    if (name === 'zstd' && zstd) return () => zstd();
    if (name === 'zstd') throw unsupportedEncoding(name, 'this runtime needs Node 22.15 or newer for it');
    throw unsupportedEncoding(name);
  });
}

// Decoded bodies are kept in small chunks until they pass this size; beyond it they are
// written into one buffer of the limit's size, whose untouched pages cost no memory, so
// handing over the body never needs a second copy of it.
const SMALL_BODY = 1 << 20;
// Past this size, a body decoding to more than RATIO times its wire size is kept only as
// wire bytes and decoded again once verified: a compression bomb then costs its wire size.
const SPILL_AFTER = 16 << 20;
const SPILL_RATIO = 16;
// Wire bytes are kept for that second decode only up to this budget.
const WIRE_BUDGET = 96 << 20;

class BodyCollector {
  private chunks: Buffer[] = [];
  private big: Buffer | undefined;
  size = 0;
  spilled = false;
  constructor(
    private readonly max: number,
    private readonly sizeHint: number | undefined,
  ) {}
  push(chunk: Buffer): void {
    if (this.spilled) {
      this.size += chunk.length;
      return;
    }
    if (!this.big && this.size + chunk.length > (this.sizeHint ?? SMALL_BODY)) {
      this.big = Buffer.allocUnsafeSlow(Math.min(this.max, Math.max(this.sizeHint ?? 0, this.size + chunk.length)));
      let at = 0;
      for (const c of this.chunks) at += c.copy(this.big, at);
      this.chunks = [];
    }
    if (this.big) {
      if (this.size + chunk.length > this.big.length) {
        // Only when a size hint was wrong: grow to the limit.
        const bigger = Buffer.allocUnsafeSlow(this.max);
        this.big.copy(bigger, 0, 0, this.size);
        this.big = bigger;
      }
      chunk.copy(this.big, this.size);
    } else {
      this.chunks.push(chunk);
    }
    this.size += chunk.length;
  }
  spill(): void {
    this.spilled = true;
    this.chunks = [];
    this.big = undefined;
  }
  result(): Buffer {
    if (this.big) return this.big.subarray(0, this.size);
    return this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.size);
  }
}

function asReadable(body: BodyInput): Readable | Buffer {
  if (body === null || body === undefined) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (typeof (body as ReadableStream).getReader === 'function') {
    return Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
  }
  return body as Readable;
}

/** Read the rest of a body and drop it, so the connection can be reused. */
export async function discard(body: BodyInput): Promise<void> {
  const source = asReadable(body);
  if (Buffer.isBuffer(source)) return;
  for await (const _ of source.iterator({ destroyOnReturn: false })) {
    // dropped
  }
}

/** A chain of decoders with a sink at its end; errors surface on the next write or at the end. */
class Pipeline {
  private readonly decoders: Decoder[];
  private readonly fed: number[];
  private failure: unknown;
  private readonly done: Promise<void>;

  constructor(
    factories: (() => Decoder)[],
    private readonly sink: (chunk: Buffer) => void,
  ) {
    this.decoders = factories.map((f) => f());
    this.fed = this.decoders.map(() => 0);
    const fail = (e: unknown) => {
      this.failure ??= e;
      for (const d of this.decoders) d.destroy();
    };
    this.decoders.forEach((d, i) => {
      d.on('error', (e: Error) =>
        fail(e instanceof WebhookError ? e : new WebhookError(400, `the body could not be decoded: ${e.message}`)),
      );
      const next = this.decoders[i + 1];
      d.on('data', (chunk: Buffer) => {
        if (this.failure) return;
        try {
          if (next) {
            this.fed[i + 1] = (this.fed[i + 1] ?? 0) + chunk.length;
            if (!next.write(chunk)) {
              d.pause();
              next.once('drain', () => d.resume());
            }
          } else {
            this.sink(chunk);
          }
        } catch (e) {
          fail(e);
        }
      });
      d.on('end', () => next?.end());
    });
    const last = this.decoders.at(-1);
    this.done = last
      ? new Promise<void>((resolve) => {
          last.on('end', resolve);
          last.on('close', resolve);
        })
      : Promise.resolve();
  }

  async write(chunk: Buffer): Promise<void> {
    this.check();
    const first = this.decoders[0];
    if (!first) {
      this.sink(chunk);
      return;
    }
    this.fed[0] = (this.fed[0] ?? 0) + chunk.length;
    if (!first.write(chunk)) {
      await new Promise<void>((resolve) => {
        const onDone = () => {
          first.off('drain', onDone);
          first.off('close', onDone);
          resolve();
        };
        first.on('drain', onDone);
        first.on('close', onDone);
      });
    }
    this.check();
  }

  async end(): Promise<void> {
    this.check();
    this.decoders[0]?.end();
    await this.done;
    this.check();
    this.decoders.forEach((d, i) => {
      // zlib stops at the end of its stream and ignores the rest: anything left is garbage.
      if (d.bytesWritten !== this.fed[i])
        throw new WebhookError(400, 'the body has trailing data after its compressed stream');
    });
  }

  abort(): void {
    for (const d of this.decoders) d.destroy();
  }

  private check(): void {
    if (this.failure) throw this.failure;
  }
}

function compare(digest: Buffer, expected: readonly Buffer[]): boolean {
  let ok = false;
  for (const e of expected) if (timingSafeEqual(digest, e)) ok = true;
  return ok;
}

/**
 * Verify and decode a delivery. Returns its resource type and decoded body, or
 * `{ ping: true }` for an unsigned ping (hand nothing to the application). Throws a
 * {@link WebhookError} whose `status` is the answer to give: 400, 401 or 413.
 *
 * @example
 * const delivery = await verifyDelivery({ headers: req.headers, body: req, secrets: process.env.SIGNING_SECRET })
 */
export async function verifyDelivery(options: VerifyOptions): Promise<VerifiedDelivery> {
  return verifyPrepared(prepareVerify(options), options.headers, options.body);
}

/**
 * {@link verifyDelivery} with options already checked by {@link prepareVerify}.
 *
 * @example
 * const delivery = await verifyPrepared(prepared, req.headers, req)
 */
export async function verifyPrepared(
  options: PreparedVerifyOptions,
  headers: HeadersInput,
  input: BodyInput,
): Promise<VerifiedDelivery> {
  const header = reader(headers);
  const checked = checkHeaders(options, header);
  if (checked.ping) {
    await discard(input);
    return { resourceType: 'ping', ping: true };
  }
  const { resourceType, prefix } = checked;
  const expected = checked.signatures.map((s) => Buffer.from(s, 'hex'));
  const { secrets, maxBodyBytes: max } = options;
  const declared = declaredTooLarge(header, max);
  const factories = decodersFor(header('content-encoding'));
  const hmacs: Hmac[] = secrets.map((s) => createHmac('sha256', s).update(prefix));
  // docs/decisions.md D14: the service signs the decoded body, but its documentation also speaks of the bytes as
  // received; with an encoding, both are hashed in the same pass.
  const wireHmacs: Hmac[] = factories.length > 0 ? secrets.map((s) => createHmac('sha256', s).update(prefix)) : [];
  const identitySize = factories.length === 0 ? declared : undefined;
  const body = new BodyCollector(max, identitySize);
  let wire = 0;
  let wireChunks: Buffer[] | undefined = factories.length > 0 ? [] : undefined;
  const pipeline = new Pipeline(factories, (chunk) => {
    if (body.size + chunk.length > max) throw tooLarge(max, 'once decoded');
    for (const h of hmacs) h.update(chunk);
    body.push(chunk);
    if (!body.spilled && wireChunks && body.size > SPILL_AFTER && body.size > SPILL_RATIO * wire) body.spill();
  });

  const source = asReadable(input);
  try {
    const chunks = Buffer.isBuffer(source) ? [source] : source.iterator({ destroyOnReturn: false });
    for await (const raw of chunks) {
      const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw as Uint8Array);
      wire += chunk.length;
      if (wire > max) throw tooLarge(max, 'on the wire');
      for (const h of wireHmacs) h.update(chunk);
      if (wireChunks) {
        if (wire <= WIRE_BUDGET || body.spilled) wireChunks.push(chunk);
        else wireChunks = undefined;
      }
      await pipeline.write(chunk);
    }
    await pipeline.end();
  } catch (error) {
    pipeline.abort();
    throw error;
  }

  const ok = [...hmacs, ...wireHmacs].map((h) => compare(h.digest(), expected)).some(Boolean);
  if (!ok) throw new WebhookError(401, 'the signature matches none of the signing secrets');
  let decoded: Buffer;
  if (body.spilled && wireChunks) {
    const again = new BodyCollector(max, body.size);
    const replay = new Pipeline(factories, (chunk) => again.push(chunk));
    for (const chunk of wireChunks) await replay.write(chunk);
    await replay.end();
    decoded = again.result();
  } else {
    decoded = body.result();
  }
  return { resourceType: resourceType as ResourceType, body: decoded, ping: false };
}
