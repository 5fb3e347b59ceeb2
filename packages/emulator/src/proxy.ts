/**
 * The emulator's side of `byop_proxy`: Chromium cannot send proxy credentials from the
 * command line, so it talks SOCKS5 without auth to this loopback server, which dials the
 * user's proxy with its credentials (HTTP CONNECT with Basic auth, or SOCKS5 with RFC 1929).
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** A running chain proxy. */
export interface ChainProxy {
  /** `socks5://127.0.0.1:<port>`, for Chromium's `--proxy-server`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Reads exactly `n` bytes from a socket that is paused between reads. */
class Reader {
  private buffer = Buffer.alloc(0);
  constructor(private readonly socket: Socket) {}
  async read(n: number): Promise<Buffer> {
    while (this.buffer.length < n) {
      const chunk = this.socket.read() as Buffer | null;
      if (chunk) {
        this.buffer = Buffer.concat([this.buffer, chunk]);
        continue;
      }
      if (this.socket.destroyed || this.socket.readableEnded) throw new Error('connection closed');
      await Promise.race([once(this.socket, 'readable'), once(this.socket, 'close').then(() => {})]);
    }
    const out = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(n);
    return out;
  }
  /** Bytes read past the last `read`, to hand on once the handshake is done. */
  rest(): Buffer {
    return this.buffer;
  }
  async readUntil(marker: string, max = 16384): Promise<string> {
    let text = '';
    while (!text.includes(marker)) {
      if (text.length > max) throw new Error('answer too long');
      text += (await this.read(1)).toString('latin1');
    }
    return text;
  }
}

async function readSocksTarget(reader: Reader): Promise<{ host: string; port: number }> {
  const [, cmd, , atyp] = await reader.read(4);
  if (cmd !== 1) throw new Error('only CONNECT is supported');
  let host: string;
  if (atyp === 1) host = [...(await reader.read(4))].join('.');
  else if (atyp === 3) host = (await reader.read((await reader.read(1))[0] ?? 0)).toString('latin1');
  else if (atyp === 4) {
    const b = await reader.read(16);
    host = Array.from({ length: 8 }, (_, i) => b.readUInt16BE(i * 2).toString(16)).join(':');
  } else throw new Error('bad address type');
  const port = (await reader.read(2)).readUInt16BE(0);
  return { host, port };
}

async function dial(proxy: URL, host: string, port: number): Promise<{ socket: Socket; rest: Buffer }> {
  const protocol = proxy.protocol.slice(0, -1).replace('+udp', '');
  const proxyPort = Number(proxy.port);
  const user = decodeURIComponent(proxy.username);
  const pass = decodeURIComponent(proxy.password);
  const socket =
    protocol === 'https'
      ? tlsConnect({ host: proxy.hostname, port: proxyPort, servername: proxy.hostname })
      : netConnect({ host: proxy.hostname.replace(/^\[|\]$/g, ''), port: proxyPort });
  await once(socket, protocol === 'https' ? 'secureConnect' : 'connect');
  socket.pause();
  const reader = new Reader(socket);
  const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  if (protocol === 'http' || protocol === 'https') {
    const auth = Buffer.from(`${user}:${pass}`).toString('base64');
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\nProxy-Authorization: Basic ${auth}\r\n\r\n`);
    const answer = await reader.readUntil('\r\n\r\n');
    if (!/^HTTP\/1\.[01] 2\d\d/.test(answer)) throw new Error(`proxy refused CONNECT: ${answer.split('\r\n')[0]}`);
    return { socket, rest: reader.rest() };
  }
  socket.write(Buffer.from([5, 1, 2]));
  const [, method] = await reader.read(2);
  if (method !== 2) throw new Error('SOCKS5 proxy does not take user/password');
  const u = Buffer.from(user);
  const p = Buffer.from(pass);
  socket.write(Buffer.concat([Buffer.from([1, u.length]), u, Buffer.from([p.length]), p]));
  const [, status] = await reader.read(2);
  if (status !== 0) throw new Error('SOCKS5 proxy refused the credentials');
  const name = Buffer.from(host);
  const portBytes = Buffer.alloc(2);
  portBytes.writeUInt16BE(port);
  socket.write(Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), name, portBytes]));
  const [, reply, , atyp] = await reader.read(4);
  if (reply !== 0) throw new Error(`SOCKS5 proxy could not connect (reply ${reply})`);
  const skip = atyp === 1 ? 4 : atyp === 4 ? 16 : ((await reader.read(1))[0] ?? 0);
  await reader.read(skip + 2);
  return { socket, rest: reader.rest() };
}

/** Start a SOCKS5 server on loopback that forwards every connection through `upstream`. */
export async function startChainProxy(upstream: string): Promise<ChainProxy> {
  const proxy = new URL(upstream);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    client.pause();
    void (async () => {
      const reader = new Reader(client);
      const [version, count] = await reader.read(2);
      if (version !== 5) throw new Error('not SOCKS5');
      await reader.read(count ?? 0);
      client.write(Buffer.from([5, 0]));
      const { host, port } = await readSocksTarget(reader);
      const early = reader.rest();
      let remote: Socket;
      try {
        const dialed = await dial(proxy, host, port);
        remote = dialed.socket;
        if (dialed.rest.length) client.write(dialed.rest);
      } catch {
        client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0]));
        return;
      }
      sockets.add(remote);
      remote.on('close', () => sockets.delete(remote));
      remote.on('error', () => client.destroy());
      client.on('error', () => remote.destroy());
      client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
      if (early.length) remote.write(early);
      client.pipe(remote).pipe(client);
      client.resume();
      remote.resume();
    })().catch(() => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `socks5://127.0.0.1:${port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
