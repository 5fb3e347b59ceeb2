/** Misbehaving WebSocket servers on loopback, for the failures a real emulator does not make. */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { listenLoopback } from './loopback.js';

export interface FakeServer {
  url: string;
  clients: WebSocket[];
  close(): Promise<void>;
}

/** A server that upgrades with `headers` and then does whatever `onClient` does (or nothing). */
export async function startWsServer(
  options: { headers?: string[]; autoPong?: boolean; onClient?: (ws: WebSocket) => void; upgrade?: boolean } = {},
): Promise<FakeServer> {
  const clients: WebSocket[] = [];
  const wss = new WebSocketServer({ noServer: true, autoPong: options.autoPong ?? true });
  wss.on('headers', (h) => h.push(...(options.headers ?? [])));
  const server: Server = createServer();
  server.on('upgrade', (req, socket, head) => {
    if (options.upgrade === false) return; // never answer
    wss.handleUpgrade(req, socket, head, (ws) => {
      clients.push(ws);
      ws.on('error', () => {});
      options.onClient?.(ws);
    });
  });
  const loopback = await listenLoopback(server);
  return {
    url: `ws://127.0.0.1:${loopback.port}/`,
    clients,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      await loopback.close();
    },
  };
}

/** A port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
