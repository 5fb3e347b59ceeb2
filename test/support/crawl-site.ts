/**
 * A local site of about 50 pages for crawl tests: docs, a robots.txt that disallows
 * /private/, a blog to exclude, an external link, a slow page, a broken page and a nofollow
 * link. Page texts can be changed to test refresh runs.
 */
import { createServer } from 'node:http';
import { listenLoopback } from './loopback.js';

export interface CrawlSite {
  origin: string;
  /** Override the body text of a path. */
  texts: Map<string, string>;
  hits: Map<string, number>;
  close(): Promise<void>;
}

export const DOCS = 40;

function page(title: string, body: string, links: string[] = []): string {
  return `<!doctype html><html><head><title>${title}</title><style>body{color:red}</style><script>var tracking = 1;</script></head>
<body><h1>${title}</h1><p>${body}</p><ul>${links.map((l) => `<li>${l}</li>`).join('')}</ul><span class="price">${title.length} EUR</span></body></html>`;
}

export async function startCrawlSite(): Promise<CrawlSite> {
  const texts = new Map<string, string>();
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    if (path === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n');
      return;
    }
    if (path === '/sitemap.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>/orphan</loc></url></urlset>'.replace(
          '/orphan',
          `http://${req.headers.host}/orphan`,
        ),
      );
      return;
    }
    if (path === '/orphan') {
      html(page('Orphan', 'Only the sitemap links here.'));
      return;
    }
    if (path === '/urls.txt') {
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end(`http://${req.headers.host}/docs/5\nhttp://${req.headers.host}/docs/6\n`);
      return;
    }
    if (path === '/echo-headers') {
      html(page('Headers', JSON.stringify({ ua: req.headers['user-agent'], custom: req.headers['x-crawl-test'] })));
      return;
    }
    if (path === '/') {
      const links = [
        ...Array.from({ length: DOCS }, (_, i) => `<a href="/docs/${i + 1}">Doc ${i + 1}</a>`),
        '<a href="/private/a">Private A</a>',
        '<a href="/private/b">Private B</a>',
        '<a href="/blog/first-post">Blog</a>',
        '<a href="http://external.test/page">External</a>',
        '<a href="/slow">Slow</a>',
        '<a href="/broken">Broken</a>',
        '<a href="/hidden" rel="nofollow">Hidden</a>',
      ];
      html(page('Home', texts.get(path) ?? 'Welcome to the test site.', links));
      return;
    }
    const doc = /^\/docs\/(\d+)$/.exec(path);
    if (doc) {
      const n = Number(doc[1]);
      const text =
        texts.get(path) ??
        (n === 7
          ? 'Pricing: the subscription costs 42 euros per month. Discounts apply to yearly plans.'
          : `Document number ${n} explains topic ${n} in plain words.`);
      html(page(`Doc ${n}`, text, [`<a href="/docs/${(n % DOCS) + 1}">next</a>`, '<a href="/">home</a>']));
      return;
    }
    if (path === '/slow') {
      setTimeout(() => html(page('Slow', 'This page answers slowly.')), 300);
      return;
    }
    if (path === '/broken') {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
      return;
    }
    const item = /^\/item\/(\d+)$/.exec(path);
    if (item) {
      html(page(`Item ${item[1]}`, `Item ${item[1]}.`));
      return;
    }
    if (path === '/private/a' || path === '/private/b' || path === '/blog/first-post' || path === '/hidden') {
      html(page(path, 'should not be crawled'));
      return;
    }
    res.writeHead(404).end();
  });
  const loopback = await listenLoopback(server);
  return { origin: `http://127.0.0.1:${loopback.port}`, texts, hits, close: loopback.close };
}
