/**
 * The native VNC port's front door (docs/decisions.md D5): one TCP listener for every session, RFB 3.8 with
 * VeNCrypt Plain (username the run id, password `<salt>-<vnc_password>`), or None for a client
 * in the session's `hitl_allowed_networks`.
 */
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { RfbConnection, type RfbSecurity } from './connection.js';

/** The service's native VNC port, which the emulator takes when it is free. */
export const PREFERRED_VNC_PORT = 5901;

export interface VncTcpServer {
  readonly port: number;
  close(): Promise<void>;
}

export interface VncTcpOptions {
  host: string;
  /** The port to listen on; when taken (or undefined), 5901 then any free port. 0: any free port. */
  port?: number | undefined;
  /** What a client from `address` is offered. */
  security(address: string): RfbSecurity;
}

async function listen(server: Server, host: string, port: number): Promise<boolean> {
  const failed = once(server, 'error').then(([error]) => error as NodeJS.ErrnoException);
  const listening = once(server, 'listening').then(() => undefined);
  server.listen(port, host);
  const error = await Promise.race([failed, listening]);
  if (!error) return true;
  if (error.code === 'EADDRINUSE' || error.code === 'EACCES') return false;
  throw error;
}

/**
 * Listen for native VNC viewers.
 *
 * @example
 * const vnc = await startVncTcpServer({ host: '127.0.0.1', security: (address) => ({ plain: check }) })
 * // vnc.port === 5901 unless it was taken
 */
export async function startVncTcpServer(options: VncTcpOptions): Promise<VncTcpServer> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const connection = new RfbConnection(
      {
        send: (data) => {
          if (!socket.destroyed) socket.write(data);
        },
        // A refusal's reason was written: let it leave before the close. A protocol error: cut.
        close: (_reason, refused) => (refused ? socket.end() : socket.destroy()),
      },
      options.security(socket.remoteAddress ?? ''),
    );
    socket.on('data', (data: Buffer) => connection.receive(data));
    socket.on('close', () => {
      sockets.delete(socket);
      connection.ended();
    });
    socket.on('error', () => {});
  });
  const preferred = options.port ?? PREFERRED_VNC_PORT;
  if (!(await listen(server, options.host, preferred))) {
    server.removeAllListeners('error');
    await listen(server, options.host, 0);
  }
  server.on('error', () => {});
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : preferred,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
