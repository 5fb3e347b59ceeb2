/**
 * 1,000,000 URLs (about 60 MB) uploaded to a loopback server: encodeCrawlRequest + fetch vs
 * the same bytes written with a bare http.request, in one run. Goals: time ratio at most
 * 1.3; peak memory growth of ours at most 2.5 times the list's size.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { median, pairedRounds, report, showRatios } from './lib.js';

const here = fileURLToPath(new URL('.', import.meta.url));
let received = 0;
const server = createServer((req, res) => {
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
  });
  req.on('end', () => {
    received = size;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"uuid":"bench"}');
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const run = async (mode: 'ours' | 'bare') => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--expose-gc', join(here, 'fixtures', 'upload-child.ts'), mode, url],
    {
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(stdout) as { ms: number; listBytes: number; growth: number; sent: number };
};

await run('ours');
await run('bare');
const ROUNDS = 9;
const results = await pairedRounds(
  ROUNDS,
  () => run('ours'),
  () => run('bare'),
  (r) => r.ms,
);
const ms = (m: 'ours' | 'bare') => median(results[m].map((r) => r.ms));
const { ratio, ratios } = results;
const list = results.ours[0]?.listBytes ?? 1;
report(
  'crawler: upload 1,000,000 URLs, encodeCrawlRequest + fetch vs bare http.request',
  ratio,
  '<= 1.3',
  ratio <= 1.3,
  `median of ${ROUNDS} paired rounds (${showRatios(ratios)}); median ours ${ms('ours').toFixed(0)} ms, bare ${ms('bare').toFixed(0)} ms (ratio of medians ${(ms('ours') / ms('bare')).toFixed(3)}), ${(list / 1e6).toFixed(1)} MB of URLs, ${received} bytes received`,
);
const growth = Math.max(...results.ours.map((r) => r.growth));
console.log(
  `crawler: peak memory growth while sending ${(growth / 1e6).toFixed(1)} MB = ${(growth / list).toFixed(2)}x the list (goal <= 2.5x) ${growth / list <= 2.5 ? 'OK' : 'MISSED'}`,
);
server.close();
