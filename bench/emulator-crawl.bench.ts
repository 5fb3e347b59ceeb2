/**
 * The emulator crawls a 2,000-page local site at max_concurrency 16, against a bare fetch
 * loop over the same URLs at the same concurrency, in one run. Goal: within 2x.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CrawlerClient } from '../packages/cloud-browser/src/crawler/index.js';
import { startEmulator } from '../packages/emulator/src/index.js';
import { median, pairedRounds, report, showRatios } from './lib.js';

const PAGES = 2000;
// Each page links to the next ten, so discovery reaches every page within a few levels.
const site = createServer((req, res) => {
  const n = Number(/^\/p\/(\d+)$/.exec(req.url ?? '')?.[1] ?? (req.url === '/' ? 0 : -1));
  if (n < 0 || n >= PAGES) {
    res.writeHead(404).end();
    return;
  }
  const links = Array.from({ length: 10 }, (_, i) => n * 10 + i + 1)
    .filter((m) => m < PAGES)
    .map((m) => `<a href="/p/${m}">page ${m}</a>`)
    .join(' ');
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(
    `<!doctype html><title>Page ${n}</title><h1>Page ${n}</h1><p>${'Some text about the page. '.repeat(20)}</p>${links}`,
  );
});
site.listen(0, '127.0.0.1');
await once(site, 'listening');
const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
const urls = [`${origin}/`, ...Array.from({ length: PAGES - 1 }, (_, i) => `${origin}/p/${i + 1}`)];

async function bare(): Promise<number> {
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < urls.length) {
        const res = await fetch(urls[next++] as string);
        await res.text();
      }
    }),
  );
  return performance.now() - start;
}

const emulator = await startEmulator();
const client = new CrawlerClient({ key: emulator.apiKey, baseUrl: emulator.apiUrl });
async function ours(): Promise<number> {
  const start = performance.now();
  const { uuid } = await client.start({ url: `${origin}/`, max_concurrency: 16, respect_robots_txt: false });
  const done = await client.wait(uuid, { pollInterval: 20 });
  if (done.state.urls_visited !== PAGES) throw new Error(`visited ${done.state.urls_visited} of ${PAGES}`);
  return performance.now() - start;
}

await bare();
await ours();
const times = await pairedRounds(5, ours, bare, (ms) => ms);
report(
  'emulator-crawl: 2,000-page crawl at concurrency 16 vs a bare fetch loop',
  times.ratio,
  '<= 2',
  times.ratio <= 2,
  `median of 5 paired rounds (${showRatios(times.ratios)}); median ours ${median(times.ours).toFixed(0)} ms, bare ${median(times.bare).toFixed(0)} ms`,
);
await emulator.close();
site.close();
