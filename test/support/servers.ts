/** Misbehaving WebSocket servers on loopback, for the failures a real emulator does not make. */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

export interface FakeServer {
  url: string;
  clients: WebSocket[];
  close(): Promise<void>;
}

/** A server that upgrades with `headers` and then does whatever `onClient` does (or nothing). */
export async function startWsServer(
  options: { headers?: string[]; autoPong?: boolean; onClient?: (ws: WebSocket) => void; upgrade?: boolean } = {},
): Promise<FakeServer> {
  const sockets = new Set<Socket>();
  const clients: WebSocket[] = [];
  const wss = new WebSocketServer({ noServer: true, autoPong: options.autoPong ?? true });
  wss.on('headers', (h) => h.push(...(options.headers ?? [])));
  const server: Server = createServer();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('upgrade', (req, socket, head) => {
    if (options.upgrade === false) return; // never answer
    wss.handleUpgrade(req, socket, head, (ws) => {
      clients.push(ws);
      ws.on('error', () => {});
      options.onClient?.(ws);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    clients,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      for (const s of sockets) s.destroy();
      wss.close();
      await new Promise<void>((r) => server.close(() => r()));
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
