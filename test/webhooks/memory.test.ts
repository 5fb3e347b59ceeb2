import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import * as zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';

// These run the built receiver (npm test builds first) in a child process, so the child's
// peak resident memory is the receiver's alone.
const child = new URL('../fixtures/receiver-child.mjs', import.meta.url);
const MiB = 1 << 20;
let running: ChildProcess | undefined;
afterEach(() => {
  running?.kill();
  running = undefined;
});

async function startReceiver(): Promise<{ url: string; peak: () => Promise<number> }> {
  running = fork(child, { stdio: 'inherit', cwd: new URL('../..', import.meta.url) });
  const [ready] = (await once(running, 'message')) as [{ url: string }];
  const proc = running;
  return {
    url: ready.url,
    peak: async () => {
      proc.send('report');
      const [m] = (await once(proc, 'message')) as [{ maxRssBytes: number }];
      return m.maxRssBytes;
    },
  };
}

/** POST `chunks` (a generator, so the sender holds little), resolve with the status. */
function send(url: string, headers: Record<string, string>, chunks: () => Generator<Buffer>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (e) => reject(e));
    const it = chunks();
    const pump = () => {
      for (let n = it.next(); !n.done; n = it.next()) {
        if (!req.write(n.value)) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

const signed = { 'x-service-webhook-resource-type': 'crawl', 'x-service-webhook-signature': 'ab'.repeat(32) };

describe('the receiver under hostile sizes', () => {
  it('refuses a gzip bomb (4 GiB of zeros) with 413 and stays under 160 MiB resident', async () => {
    const receiver = await startReceiver();
    const member = zlib.gzipSync(Buffer.alloc(64 * MiB), { level: 9 });
    const status = await send(receiver.url, { ...signed, 'content-encoding': 'gzip' }, function* () {
      for (let i = 0; i < 64; i++) yield member;
    });
    expect(status).toBe(413);
    const peak = await receiver.peak();
    console.log(`receiver peak RSS ${(peak / MiB).toFixed(0)} MiB`);
    expect(peak).toBeLessThan(160 * MiB);
  }, 60_000);

  it('refuses a 300 MiB identity body with 413 and stays under 160 MiB resident', async () => {
    const receiver = await startReceiver();
    const chunk = Buffer.alloc(MiB, 0x61);
    const status = await send(receiver.url, { ...signed, 'content-length': String(300 * MiB) }, function* () {
      for (let i = 0; i < 300; i++) yield chunk;
    }).catch(() => -1);
    expect(status).toBe(413);
    const peak = await receiver.peak();
    console.log(`receiver peak RSS ${(peak / MiB).toFixed(0)} MiB`);
    expect(peak).toBeLessThan(160 * MiB);
  }, 60_000);

  it('refuses a truncated gzip body with 400', async () => {
    const receiver = await startReceiver();
    const gz = zlib.gzipSync(Buffer.alloc(MiB, 0x62));
    const status = await send(receiver.url, { ...signed, 'content-encoding': 'gzip' }, function* () {
      yield gz.subarray(0, gz.length - 100);
    });
    expect(status).toBe(400);
  });
});
