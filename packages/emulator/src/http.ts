/** Answers of the emulator's HTTP side, in the shape of docs/wire.md §7 and the service's envelope (docs/decisions.md D13). */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { redact } from 'cloud-browser';

/**
 * An error body carrying both the part-7 fields and the service's envelope (docs/decisions.md D13), so that
 * a client reading either finds it. The message is redacted.
 */
export function errorBody(status: number, code: string, message: string, extra: Record<string, unknown> = {}) {
  const text = redact(message);
  return {
    status: 'error',
    http_code: status,
    reason: STATUS_CODES[status] ?? 'Error',
    error_id: randomUUID(),
    message: text,
    code,
    http_status_code: status,
    is_retryable: false,
    ...extra,
  };
}

/** Answer JSON. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

/** A refusal to answer with {@link sendError}. */
export interface Refusal {
  status: number;
  code: string;
  message: string;
  extra: Record<string, unknown>;
}

/** Make a {@link Refusal}. */
export function refusal(status: number, code: string, message: string, extra: Record<string, unknown> = {}): Refusal {
  return { status, code, message, extra };
}

/** The accepted API key in `?key=` of `url`, or the 401 refusal of a missing or unknown one. */
export function keyOf(url: URL, apiKeys: ReadonlySet<string>): string | Refusal {
  const key = url.searchParams.get('key');
  if (key && apiKeys.has(key)) return key;
  const why = key ? 'the API key is not valid' : 'the API key is missing: pass it as the `key` query parameter';
  return refusal(401, 'ERR::AUTH::INVALID_KEY', why);
}

/** Whether a value is a {@link Refusal}. */
export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && 'code' in value && 'status' in value && 'extra' in value;
}

/** Answer an error in the shape of {@link errorBody}. */
export function sendError(res: ServerResponse, r: Refusal): void {
  sendJson(res, r.status, errorBody(r.status, r.code, r.message, r.extra));
}

/** A request body up to `limit` bytes, or a 413 refusal (the rest is drained). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | Refusal> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > limit) {
      req.resume();
      return refusal(413, 'ERR::CRAWLER::REQUEST_TOO_LARGE', `the body is larger than ${limit} bytes`);
    }
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

/** A JSON object body (empty means `{}`), or a refusal naming what is wrong. */
export async function readJson(req: IncomingMessage, limit = 1 << 20): Promise<Record<string, unknown> | Refusal> {
  const body = await readBody(req, limit);
  if (!Buffer.isBuffer(body)) return body;
  if (body.length === 0) return {};
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {}
  return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', 'the body must be a JSON object');
}

/** Refuse a WebSocket upgrade with a JSON body on the raw socket, then close it. */
export function refuseUpgrade(socket: Socket, status: number, body: object): void {
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}

/** Send a file whole, or the one byte range the request asks for (as a `<video>` does). */
export async function sendFileRange(
  req: IncomingMessage,
  res: ServerResponse,
  file: { path: string; size: number; type: string; name: string },
): Promise<void> {
  const range = /^bytes=(\d*)-(\d*)$/.exec(String(req.headers.range ?? ''));
  let start = 0;
  let end = file.size - 1;
  if (range && (range[1] || range[2])) {
    start = range[1] ? Number(range[1]) : Math.max(0, file.size - Number(range[2]));
    end = range[1] && range[2] ? Math.min(Number(range[2]), end) : end;
    if (start > end) {
      res.writeHead(416, { 'content-range': `bytes */${file.size}` }).end();
      return;
    }
  }
  const partial = start !== 0 || end !== file.size - 1;
  res.writeHead(partial ? 206 : 200, {
    'content-type': file.type,
    'content-length': String(end - start + 1),
    'accept-ranges': 'bytes',
    'content-disposition': `inline; filename="${file.name}"`,
    ...(partial ? { 'content-range': `bytes ${start}-${end}/${file.size}` } : {}),
  });
  await pipeline(createReadStream(file.path, { start, end }), res).catch(() => res.destroy());
}
