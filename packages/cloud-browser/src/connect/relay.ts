/**
 * A loopback WebSocket relay for Playwright: it listens on 127.0.0.1, port 0, at an
 * unguessable path, takes exactly one client and relays frames unchanged both ways, so
 * Playwright is never handed a URL that holds a secret.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { redact } from '../internal/redact.js';
import { type CloudSocket, MAX_FRAME_BYTES } from './socket.js';

/** A running relay. */
export interface Relay {
  /** `ws://127.0.0.1:<port>/<uuid>`: holds no secret. */
  readonly url: string;
  /** Stop listening and close the client's socket. */
  close(code?: number, reason?: string): Promise<void>;
}

/**
 * The code to send on for a close the other side saw with `code`: 1005 (a close frame without a
 * code, as Playwright's `browser.close()` sends) and 1006 (the local client went away without a
 * close frame: its process ended) are a normal end, 1000; other codes a peer may not send in a
 * close frame are reported as 1011.
 */
function sendableCode(code: number): number {
  if (code === 1005 || code === 1006) return 1000;
  return code === 1000 ||
    (code >= 1001 && code <= 1003) ||
    (code >= 1007 && code <= 1014) ||
    (code >= 3000 && code <= 4999)
    ? code
    : 1011;
}

/** Start a relay in front of `upstream`. */
export async function startRelay(upstream: CloudSocket): Promise<Relay> {
  const path = `/${randomUUID()}`;
  const server: Server = createServer((_req, res) => {
    res.writeHead(404).end();
  });
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_FRAME_BYTES,
    skipUTF8Validation: true,
  });
  let client: WebSocket | undefined;
  const pending: [Buffer, boolean][] = [];
  let closing: Promise<void> | undefined;
  // Ends the client's socket, stops listening and drops every handle, once, whoever asks:
  // a relay left listening would keep the user's process alive after `browser.close()`.
  const close = (code = 1000, reason = ''): Promise<void> => {
    closing ??= (async () => {
      if (client && client.readyState <= WebSocket.OPEN) {
        const c = client;
        const done = new Promise<void>((resolve) => c.once('close', () => resolve()));
        c.close(sendableCode(code), reason);
        const timer = setTimeout(() => c.terminate(), 2000);
        await done;
        clearTimeout(timer);
      }
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    })();
    return closing;
  };

  server.on('upgrade', (req, socket, head) => {
    if (req.url !== path || client !== undefined) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      client = ws;
      ws.on('message', (data: Buffer, isBinary: boolean) => upstream.send(data, isBinary));
      ws.on('close', (code: number, reason: Buffer) => {
        void upstream.close(sendableCode(code), reason.toString('utf8').slice(0, 120));
        void close();
      });
      ws.on('error', () => {});
      for (const [data, isBinary] of pending.splice(0)) ws.send(data, { binary: isBinary });
    });
  });
  upstream.setFrameHandler((data, isBinary) => {
    if (client?.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
    else if (client === undefined) pending.push([data, isBinary]);
  });
  void upstream.closed.then((error) => close(error.closeCode, redact(error.reason).slice(0, 120)));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { url: `ws://127.0.0.1:${port}${path}`, close };
}
