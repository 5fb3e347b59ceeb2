/** Answers of the emulator's HTTP side, in the shape of spec part 7. */
import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { redact } from '../internal/redact.js';

/** A part-7 error body; the message is redacted. */
export function errorBody(status: number, code: string, message: string, extra: Record<string, unknown> = {}) {
  return { message: redact(message), code, http_status_code: status, is_retryable: false, ...extra };
}

/** Answer JSON. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

/** Refuse a WebSocket upgrade with a JSON body on the raw socket, then close it. */
export function refuseUpgrade(socket: Socket, status: number, body: object): void {
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}
