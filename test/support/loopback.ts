/** A test server on 127.0.0.1, port 0, whose close() also ends every connection it holds. */
import { once } from 'node:events';
import type { AddressInfo, Server, Socket } from 'node:net';

export interface Loopback {
  port: number;
  /** Count a socket the server opened itself (a proxy's upstream) as one of its connections. */
  track(socket: Socket): void;
  close(): Promise<void>;
}

export async function listenLoopback(server: Server): Promise<Loopback> {
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  };
  server.on('connection', track);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    track,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
