import { afterEach, describe, expect, it } from 'vitest';
import { openCloudSocket } from '../../packages/cloud-browser/src/connect/socket.js';
import {
  isConfigError,
  isConnectionError,
  isSessionClosedError,
  isTimeoutError,
  type SessionClosedError,
} from '../../packages/cloud-browser/src/index.js';
import { eventually, puppeteerDriver } from '../support/drivers.js';
import { rejection } from '../support/rejection.js';
import { closedPort, type FakeServer, startWsServer } from '../support/servers.js';

const API_KEY = 'scp-test-0000000000000000000000000000000000';
let servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function server(options: Parameters<typeof startWsServer>[0]) {
  const s = await startWsServer(options);
  servers.push(s);
  return s;
}

describe('the session socket', () => {
  it('closes a session whose peer stops answering keep-alive pings, saying so', async () => {
    const s = await server({ autoPong: false });
    const socket = await openCloudSocket(new URL(`${s.url}?api_key=${API_KEY}`), { keepAlive: 0.2 });
    const closed: SessionClosedError = await socket.closed;
    expect(isSessionClosedError(closed)).toBe(true);
    expect(closed.closeCode).toBe(1006);
    expect(closed.message).toContain('keep-alive');
  });

  it("hands over one frame a tick, as Puppeteer's own transport does, even when several arrive together", async () => {
    const s = await server({
      onClient: (ws) =>
        ws.once('message', () => {
          // Three frames in one TCP write.
          const raw = (ws as unknown as { _socket: import('node:net').Socket })._socket;
          raw.cork();
          for (const n of [1, 2, 3]) ws.send(`frame ${n}`);
          raw.uncork();
        }),
    });
    const socket = await openCloudSocket(new URL(`${s.url}?api_key=${API_KEY}`));
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      socket.setFrameHandler((data) => {
        order.push(data.toString());
        // What the handler starts (Puppeteer answers a binding here) runs before the next frame.
        queueMicrotask(() => order.push('then'));
        if (data.toString() === 'frame 3') setImmediate(resolve);
      });
      socket.send('go', false);
    });
    expect(order).toEqual(['frame 1', 'then', 'frame 2', 'then', 'frame 3', 'then']);
    await socket.close();
  });

  it('keeps a session whose peer answers pings', async () => {
    const s = await server({});
    const socket = await openCloudSocket(new URL(`${s.url}?api_key=${API_KEY}`), { keepAlive: 0.1 });
    await new Promise((r) => setTimeout(r, 500));
    expect(socket.error).toBeUndefined();
    await socket.close();
    expect((await socket.closed).closeCode).toBe(1000);
  });

  it('reads the run id and salt headers of the upgrade', async () => {
    const s = await server({ headers: ['X-Browser-Run-Id: run-abc', 'X-Browser-Project-Salt: 701018DA'] });
    const socket = await openCloudSocket(new URL(`${s.url}?api_key=${API_KEY}`));
    expect([socket.runId, socket.saltHeader]).toEqual(['run-abc', '701018da']);
    await socket.close();
  });

  it('refuses a salt that does not match the key, naming the likely cause', async () => {
    const s = await server({ headers: ['X-Browser-Run-Id: run-abc', 'X-Browser-Project-Salt: deadbeef'] });
    const error = await rejection(puppeteerDriver.connect({ browser_url: s.url, api_key: API_KEY }));
    expect(isConfigError(error)).toBe(true);
    expect((error as Error).message).toContain('does not match `api_key`');
    // The socket is closed, not left open behind the error.
    expect(
      await eventually(
        () => s.clients[0]?.readyState,
        (state) => state === 3,
      ),
    ).toBe(3);
  });

  it('gives a ConnectionError when nothing listens', async () => {
    const port = await closedPort();
    const error = await rejection(openCloudSocket(new URL(`ws://127.0.0.1:${port}/?api_key=${API_KEY}`)));
    expect(isConnectionError(error)).toBe(true);
    expect((error as Error).message).toContain('ECONNREFUSED');
  });

  it('gives a TimeoutError when the handshake never completes', async () => {
    const s = await server({ upgrade: false });
    const error = await rejection(openCloudSocket(new URL(`${s.url}?api_key=${API_KEY}`), { timeout: 300 }));
    expect(isTimeoutError(error)).toBe(true);
  });

  it('gives a TimeoutError when the library cannot attach in time', async () => {
    const s = await server({});
    const error = await rejection(puppeteerDriver.connect({ browser_url: s.url, api_key: API_KEY }, { timeout: 300 }));
    expect(isTimeoutError(error)).toBe(true);
    expect((error as Error).message).toContain('Puppeteer did not attach');
  });

  it('stops at once when aborted', async () => {
    const s = await server({ upgrade: false });
    const controller = new AbortController();
    const pending = rejection(openCloudSocket(new URL(`${s.url}?api_key=${API_KEY}`), { signal: controller.signal }));
    controller.abort();
    expect(((await pending) as Error).name).toBe('AbortError');
  });
});
