/**
 * A markdown crawl of documentation-shaped pages, as users crawl for: a generated manual of
 * 1,200 pages (20 to 500 KB each, a navigation bar, a sidebar of 100 to 2,000 links, sections of
 * prose with tables, fenced code and inline code, a footer, and an index page of thousands of
 * links), at max_concurrency 16, against a bare loop in the same process (fetch, htmlparser2 for
 * the links, the same scope, the same concurrency). Paired rounds; the process's peak RSS during
 * the crawl too. Goals: at most 1.5x the bare loop, at most 300 MB.
 *
 * `DOCS_DIR=/usr/share/doc/…/html npm run bench -- docs-crawl` crawls a real HTML manual from
 * that folder instead (its `index.html` the seed), as the issue asks to be run by hand.
 */
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import { Parser } from 'htmlparser2';
import { CrawlerClient } from '../packages/cloud-browser/src/crawler/index.js';
import { startEmulator } from '../packages/emulator/src/index.js';
import { median, pairedRounds, report, showRatios } from './lib.js';

const PAGES = Number(process.env.DOCS_PAGES ?? 1200);
const ROUNDS = Number(process.env.DOCS_ROUNDS ?? 3);
const WORDS =
  'the a of to and in is for that with as on by this be are from or it an value type function table column row index query server client returns string number default option array object must may each when which if not can will'.split(
    ' ',
  );

/** A small deterministic generator, so both sides fetch the same bytes. */
function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

function sentence(r: () => number, n: number): string {
  return Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
}

/** One page of the manual: chrome around sections until it reaches its size. */
function page(n: number): string {
  const r = random(n + 1);
  const target = Math.round(20_000 * 25 ** (r() ** 2)); // 20 KB to 500 KB, most of them small
  const sidebarLinks = 100 + Math.floor(r() ** 3 * 1900);
  const link = (i: number) =>
    `<li class="toctree-l1"><a class="reference internal" href="/p/${i}.html">Section ${i}</a></li>`;
  const sidebar = Array.from({ length: sidebarLinks }, () => link(Math.floor(r() * PAGES))).join('');
  let main = `<h1>${n}. Chapter ${n}<a class="headerlink" href="#top">¶</a></h1>`;
  for (let s = 0; main.length < target; s++) {
    main += `<section id="s${s}"><h2>${n}.${s}. ${sentence(r, 4)}<a class="headerlink" href="#s${s}">¶</a></h2>`;
    for (let p = 0; p < 4; p++) {
      main += `<p>${sentence(r, 40)} <code class="literal">${sentence(r, 1)}()</code> ${sentence(r, 30)} <a href="/p/${Math.floor(r() * PAGES)}.html">${sentence(r, 2)}</a>.</p>`;
    }
    if (s % 3 === 0) {
      const rows = Array.from(
        { length: 10 + Math.floor(r() * 20) },
        () => `<tr><td><code>${sentence(r, 1)}</code></td><td>${sentence(r, 3)}</td><td>${sentence(r, 8)}</td></tr>`,
      );
      main += `<table class="docutils"><thead><tr><th>Name</th><th>Type</th><th>Description</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
    }
    if (s % 2 === 0) {
      main += `<div class="highlight-python"><pre><code class="language-python">def f${s}(x):\n    return ${sentence(r, 3).replace(/ /g, '_')}(x) &lt; 3\n</code></pre></div>`;
    }
    main += '</section>';
  }
  return `<!doctype html><html><head><title>Chapter ${n}</title></head><body>
<header class="site-header"><nav>${Array.from({ length: 50 }, (_, i) => `<a href="/p/${i}.html">Top ${i}</a>`).join(' ')}</nav></header>
<div class="sphinxsidebar" role="navigation"><ul>${sidebar}</ul></div>
<div class="document"><div class="body" role="main">${main}</div></div>
<footer class="footer">© 2026 Example · <a href="/genindex.html">Index</a></footer></body></html>`;
}

/** The index: a link to every page, three times. */
function index(): string {
  const links = Array.from(
    { length: PAGES * 3 },
    (_, i) => `<li><a href="/p/${i % PAGES}.html#e${i}">entry ${i}</a></li>`,
  );
  return `<!doctype html><title>Index</title><body><main><h1>Index</h1><ul>${links.join('')}</ul></main></body>`;
}

const DOCS_DIR = process.env.DOCS_DIR;

/** A real manual's file, or undefined outside the folder or missing. */
async function file(path: string): Promise<string | undefined> {
  if (!DOCS_DIR) return undefined;
  const relative = normalize(decodeURIComponent(path === '/' ? '/index.html' : path)).replace(/^(\.\.[/\\])+/, '');
  return readFile(join(DOCS_DIR, relative), 'utf8').catch(() => undefined);
}

const site = createServer(async (req, res) => {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (DOCS_DIR) {
    const body = path.endsWith('.html') || path === '/' ? await file(path) : undefined;
    if (!body) return void res.writeHead(404).end();
    return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  }
  const n = Number(/^\/p\/(\d+)\.html$/.exec(path)?.[1] ?? -1);
  const body = path === '/genindex.html' || path === '/' ? index() : n >= 0 && n < PAGES ? page(n) : undefined;
  if (!body) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
});
site.listen(0, '127.0.0.1');
await once(site, 'listening');
const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

/** The bare loop: fetch, read the links with htmlparser2, keep those of the site, 16 at once. */
async function bare(): Promise<{ ms: number; pages: number }> {
  const start = performance.now();
  const seen = new Set([`${origin}/`]);
  const queue = [`${origin}/`];
  let active = 0;
  await new Promise<void>((resolve) => {
    const pump = () => {
      while (active < 16 && queue.length > 0) {
        const url = queue.shift() as string;
        active++;
        void fetch(url)
          .then((res) => res.text())
          .then((html) => {
            const parser = new Parser({
              onopentag(name, attrs) {
                if (name !== 'a' || !attrs.href) return;
                const u = new URL(attrs.href, url);
                u.hash = '';
                if (u.origin === origin && !seen.has(u.href)) {
                  seen.add(u.href);
                  queue.push(u.href);
                }
              },
            });
            parser.end(html);
          })
          .finally(() => {
            active--;
            if (queue.length === 0 && active === 0) resolve();
            else pump();
          });
      }
    };
    pump();
  });
  return { ms: performance.now() - start, pages: seen.size };
}

const emulator = await startEmulator({ warmBrowsers: 0 });
const client = new CrawlerClient({ key: emulator.apiKey, baseUrl: emulator.apiUrl });
let peak = 0;
let readBack = 0;
async function ours(): Promise<{ ms: number; pages: number }> {
  global.gc?.();
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 25);
  const start = performance.now();
  const { uuid } = await client.start({
    url: `${origin}/`,
    max_concurrency: 16,
    respect_robots_txt: false,
    page_limit: 0,
    content_formats: ['markdown'],
  });
  const done = await client.wait(uuid, { pollInterval: 20 });
  const ms = performance.now() - start;
  clearInterval(sampler);
  const read = performance.now();
  let contents = 0;
  for await (const _ of client.contents(uuid, { formats: ['markdown'], limit: 50 })) contents++;
  readBack = performance.now() - read;
  if (contents !== done.state.urls_visited) throw new Error(`read ${contents} of ${done.state.urls_visited}`);
  return { ms, pages: done.state.urls_visited };
}

try {
  const warm = await bare();
  const rounds = await pairedRounds(ROUNDS, ours, bare, (r) => r.ms);
  const pages = rounds.ours[0]?.pages ?? 0;
  if (pages !== warm.pages)
    console.log(`docs-crawl: the crawl visited ${pages} pages, the bare loop fetched ${warm.pages}`);
  report(
    `docs-crawl: markdown crawl of a ${pages}-page ${DOCS_DIR ? `real manual (${DOCS_DIR})` : 'generated manual'} vs a bare fetch-and-parse loop`,
    rounds.ratio,
    '<= 1.5',
    rounds.ratio <= 1.5,
    `median of ${ROUNDS} paired rounds (${showRatios(rounds.ratios)}); median ours ${median(rounds.ours.map((r) => r.ms)).toFixed(0)} ms, bare ${median(rounds.bare.map((r) => r.ms)).toFixed(0)} ms; contents read back in ${readBack.toFixed(0)} ms`,
  );
  const mb = peak / 1024 / 1024;
  console.log(
    `docs-crawl: peak RSS of the process during the crawls ${mb.toFixed(0)} MB (goal <= 300) ${mb <= 300 ? 'OK' : 'MISSED'}`,
  );
} finally {
  await emulator.close();
  site.close();
}
