/**
 * Real proxies for the byop_proxy tests: an HTTP CONNECT proxy with Basic auth and a SOCKS5
 * proxy with user/password auth, both on loopback, both logging what they carried.
 */

import { connect, createServer, type Socket } from 'node:net';
import { listenLoopback } from './loopback.js';

export interface TestProxy {
  url(user: string, password: string): string;
  /** `host:port` of every tunnel opened with the right credentials. */
  tunnels: string[];
  /** Attempts with wrong credentials. */
  refused: number;
  close(): Promise<void>;
}

function tunnel(
  client: Socket,
  host: string,
  port: number,
  track: (s: Socket) => void,
  onReady: () => void,
  rest?: Buffer,
) {
  const remote = connect({ host, port }, () => {
    onReady();
    if (rest?.length) remote.write(rest);
    client.pipe(remote).pipe(client);
  });
  track(remote);
  remote.on('error', () => client.destroy());
  client.on('error', () => remote.destroy());
}

export async function startHttpProxy(user: string, password: string): Promise<TestProxy> {
  let track: (s: Socket) => void = () => {};
  const proxy: TestProxy = { url: () => '', tunnels: [], refused: 0, close: async () => {} };
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const server = createServer((client) => {
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      client.off('data', onData);
      const lines = head.subarray(0, end).toString('latin1').split('\r\n');
      const [method, target] = (lines[0] ?? '').split(' ');
      const auth = lines
        .find((l) => l.toLowerCase().startsWith('proxy-authorization:'))
        ?.slice(20)
        .trim();
      if (method !== 'CONNECT' || auth !== expected) {
        proxy.refused++;
        client.end(
          'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n',
        );
        return;
      }
      const [host, port] = (target ?? '').split(':');
      tunnel(
        client,
        host ?? '',
        Number(port),
        track,
        () => {
          proxy.tunnels.push(target ?? '');
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        },
        head.subarray(end + 4),
      );
    };
    client.on('data', onData);
  });
  const loopback = await listenLoopback(server);
  track = loopback.track;
  const port = loopback.port;
  proxy.url = (u, p) => `http://${u}:${p}@127.0.0.1:${port}`;
  proxy.close = loopback.close;
  return proxy;
}

export async function startSocksProxy(user: string, password: string): Promise<TestProxy> {
  let track: (s: Socket) => void = () => {};
  const proxy: TestProxy = { url: () => '', tunnels: [], refused: 0, close: async () => {} };
  const server = createServer((client) => {
    let buf = Buffer.alloc(0);
    let stage = 0;
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (stage === 0 && buf.length >= 2 && buf.length >= 2 + (buf[1] ?? 0)) {
        const methods = [...buf.subarray(2, 2 + (buf[1] ?? 0))];
        buf = buf.subarray(2 + (buf[1] ?? 0));
        if (!methods.includes(2)) {
          proxy.refused++;
          client.end(Buffer.from([5, 0xff]));
          return;
        }
        client.write(Buffer.from([5, 2]));
        stage = 1;
      }
      if (stage === 1 && buf.length >= 2) {
        const ul = buf[1] ?? 0;
        if (buf.length < 3 + ul) return;
        const pl = buf[2 + ul] ?? 0;
        if (buf.length < 3 + ul + pl) return;
        const u = buf.subarray(2, 2 + ul).toString();
        const p = buf.subarray(3 + ul, 3 + ul + pl).toString();
        buf = buf.subarray(3 + ul + pl);
        if (u !== user || p !== password) {
          proxy.refused++;
          client.end(Buffer.from([1, 1]));
          return;
        }
        client.write(Buffer.from([1, 0]));
        stage = 2;
      }
      if (stage === 2 && buf.length >= 5) {
        const atyp = buf[3];
        let host: string;
        let offset: number;
        if (atyp === 1) {
          if (buf.length < 10) return;
          host = [...buf.subarray(4, 8)].join('.');
          offset = 8;
        } else if (atyp === 3) {
          const len = buf[4] ?? 0;
          if (buf.length < 7 + len) return;
          host = buf.subarray(5, 5 + len).toString();
          offset = 5 + len;
        } else {
          client.destroy();
          return;
        }
        const port = buf.readUInt16BE(offset);
        const rest = buf.subarray(offset + 2);
        client.off('data', onData);
        stage = 3;
        tunnel(
          client,
          host,
          port,
          track,
          () => {
            proxy.tunnels.push(`${host}:${port}`);
            client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
          },
          rest,
        );
      }
    };
    client.on('data', onData);
  });
  const loopback = await listenLoopback(server);
  track = loopback.track;
  const port = loopback.port;
  proxy.url = (u, p) => `socks5://${u}:${p}@127.0.0.1:${port}`;
  proxy.close = loopback.close;
  return proxy;
}
