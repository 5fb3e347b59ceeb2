/**
 * A site of crawler traps on loopback, one scenario of the crawler compliance suites that
 * crawler vendors publish per path, counting every request it gets; and a second host
 * (127.0.0.2) that must never be reached.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGzip, gzipSync } from 'node:zlib';

const MB = 1024 * 1024;

export interface TrapSite {
  origin: string;
  /** The other host's origin: a redirect points there. */
  otherOrigin: string;
  /** Requests per path and query, on this host. */
  hits: Map<string, number>;
  /** Requests the other host got. */
  otherHits(): number;
  /** Bytes of the 200 MB file written before the crawler hung up. */
  hugeBytesSent(): number;
  /** Requests whose path starts with `prefix`. */
  count(prefix: string): number;
  close(): Promise<void>;
}

const page = (title: string, body: string, head = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>${head}</head><body><main><h1>${title}</h1>${body}</main></body></html>`;
const links = (...hrefs: string[]) => hrefs.map((h) => `<p><a href="${h}">${h}</a></p>`).join('\n');

/** The encodings scenarios: bytes as a server in that encoding sends them, and the text they hold. */
export const ENCODED = {
  latin1: { text: 'Café crème brûlée à la française', contentType: 'text/html; charset=ISO-8859-1' },
  cp1252: { text: 'Le prix est de 5 € — “entre guillemets”', contentType: 'text/html' },
  sjis: { text: '日本語のページです', contentType: 'text/html' },
  utf16: { text: 'Ünïcödé in UTF-16 — ελληνικά', contentType: 'text/html' },
} as const;

function encodedPage(name: keyof typeof ENCODED): Buffer {
  const { text } = ENCODED[name];
  if (name === 'latin1') return Buffer.from(page('latin1', `<p>${text}</p>`), 'latin1');
  if (name === 'cp1252') {
    // windows-1252: the euro sign is 0x80, the quotes 0x93 and 0x94, the dash 0x97.
    const html = page('cp1252', `<p>${text}</p>`).replace('<meta charset="utf-8">', '<meta charset="windows-1252">');
    const map: Record<string, number> = { '€': 0x80, '“': 0x93, '”': 0x94, '—': 0x97 };
    return Buffer.from([...html].map((ch) => map[ch] ?? ch.charCodeAt(0)));
  }
  if (name === 'sjis') {
    const head = '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">';
    const html = page('sjis', '<p>TEXT</p>', head).replace('<meta charset="utf-8">', '');
    // 日本語のページです in Shift_JIS.
    const sjis = Buffer.from([
      0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x82, 0xcc, 0x83, 0x79, 0x81, 0x5b, 0x83, 0x57, 0x82, 0xc5, 0x82, 0xb7,
    ]);
    const [before = '', after = ''] = html.split('TEXT');
    return Buffer.concat([Buffer.from(before, 'latin1'), sjis, Buffer.from(after, 'latin1')]);
  }
  const html = page('utf16', `<p>${text}</p>`).replace('<meta charset="utf-8">', '');
  return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(html, 'utf16le')]);
}

const sitemap = (urls: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<url><loc>${u}</loc></url>`).join('')}</urlset>`;
const sitemapIndex = (urls: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<sitemap><loc>${u}</loc></sitemap>`).join('')}</sitemapindex>`;

/** `month` moved by `by` months, as YYYY-MM. */
function addMonths(month: string, by: number): string {
  const [y = 2024, m = 1] = month.split('-').map(Number);
  const d = new Date(Date.UTC(y, m - 1 + by, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

export async function startTrapSite(): Promise<TrapSite> {
  const hits = new Map<string, number>();
  let otherHits = 0;
  let hugeSent = 0;
  // 256 MB of zeros gzipped to a few hundred KB, made once, streamed.
  const bomb = await new Promise<Buffer>((resolve) => {
    const gzip = createGzip({ level: 1 });
    const chunks: Buffer[] = [];
    gzip.on('data', (c: Buffer) => chunks.push(c));
    gzip.on('end', () => resolve(Buffer.concat(chunks)));
    const zeros = Buffer.alloc(MB);
    let left = 256;
    const write = () => {
      while (left > 0) {
        left--;
        if (!gzip.write(zeros)) return void gzip.once('drain', write);
      }
      gzip.end();
    };
    write();
  });

  const other = createServer((_req, res) => {
    otherHits++;
    res.end(page('secret', '<p>the other host</p>'));
  });
  other.listen(0, '127.0.0.2');
  await once(other, 'listening');
  const otherOrigin = `http://127.0.0.2:${(other.address() as AddressInfo).port}`;

  let origin = '';
  const html = (res: ServerResponse, body: string, headers: Record<string, string> = {}) =>
    void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(body);
  const redirect = (res: ServerResponse, to: string, status = 302) =>
    void res.writeHead(status, { location: to }).end();

  const routes = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', origin);
    const path = url.pathname;
    if (path === '/robots.txt') {
      return void res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end(
          [
            'User-agent: otherbot',
            'Disallow: /',
            '',
            'User-agent: *',
            'Disallow: /trap/',
            'Allow: /trap/open',
            'Disallow: /*.private$',
            'Disallow: /search?q=',
            `Sitemap: ${origin}/sitemap-index.xml`,
          ].join('\n'),
        );
    }
    if (path === '/') {
      return html(
        res,
        page(
          'Trap site',
          links(
            '/trap/secret',
            '/trap/open',
            '/file.private',
            '/file.private.html',
            '/search?q=x',
            '/search?page=1',
            '/meta-nofollow',
            '/rel-nofollow',
            '/x-robots',
            '/noindex',
            '/loop-a',
            '/chain/0',
            '/vortex',
            '/calendar?month=2024-01',
            '/frag#one',
            '/frag#two',
            '/variant',
            '/variant?',
            '/%76ariant',
            `${origin.toUpperCase()}/variant#top`,
            '/pct%2fx',
            '/pct%2Fx',
            '/to-other',
            '/to-disallowed',
            '/based/',
            '/dir',
            '/bomb',
            '/huge.bin',
            '/enc/latin1',
            '/enc/cp1252',
            '/enc/sjis',
            '/enc/utf16',
            '/doc.pdf',
            '/blob',
          ),
        ),
      );
    }
    if (path === '/meta-nofollow')
      return html(
        res,
        page('meta nofollow', links('/meta-nofollow-target'), '<meta name="robots" content="nofollow">'),
      );
    if (path === '/rel-nofollow')
      return html(res, page('rel nofollow', '<a rel="nofollow noopener" href="/rel-nofollow-target">t</a>'));
    if (path === '/x-robots')
      return html(res, page('x-robots-tag', links('/x-robots-target')), { 'x-robots-tag': 'nofollow' });
    if (path === '/noindex')
      return html(
        res,
        page('noindex', '<p>zebra crossing unique words</p>', '<meta name="ROBOTS" content="noindex, follow">'),
      );
    if (path === '/loop-a') return redirect(res, '/loop-b');
    if (path === '/loop-b') return redirect(res, '/loop-a');
    if (path.startsWith('/chain/')) return redirect(res, `/chain/${Number(path.slice(7)) + 1}`);
    if (path.startsWith('/vortex')) {
      const id = Math.random().toString(36).slice(2);
      return html(
        res,
        page('vortex', links(`/vortex;jsessionid=${id}`, `/vortex?sid=${id}`, `/vortex?SessionId=${id}`)),
      );
    }
    if (path === '/calendar') {
      const month = url.searchParams.get('month') ?? '2024-01';
      return html(
        res,
        page(
          `calendar ${month}`,
          links(`/calendar?month=${addMonths(month, -1)}`, `/calendar?month=${addMonths(month, 1)}`),
        ),
      );
    }
    if (path === '/to-other') return redirect(res, `${otherOrigin}/secret`);
    if (path === '/to-disallowed') return redirect(res, '/trap/inner');
    if (path === '/to-public') return redirect(res, 'http://example.com/landing');
    if (path === '/based/') return html(res, page('based', links('page'), '<base href="/base-target/">'));
    if (path === '/dir') return redirect(res, '/dir/', 301);
    if (path === '/dir/') return html(res, page('dir', links('child')));
    if (path === '/bomb')
      return void res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(bomb);
    if (path === '/huge.bin') {
      // 200 MB, chunked: the crawler finds the size while it reads.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(MB, 0xab);
      const write = () => {
        while (hugeSent < 200 * MB && !res.destroyed) {
          hugeSent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', write);
        }
        res.end();
      };
      return write();
    }
    if (path.startsWith('/enc/')) {
      const name = path.slice(5) as keyof typeof ENCODED;
      return void res.writeHead(200, { 'content-type': ENCODED[name].contentType }).end(encodedPage(name));
    }
    if (path === '/doc.pdf')
      return void res
        .writeHead(200, { 'content-type': 'application/pdf' })
        .end('%PDF-1.4\n1 0 obj << >> endobj\n%%EOF');
    if (path === '/blob') {
      // A PNG signature and no Content-Type: sniffed.
      return void res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]));
    }
    if (path === '/sitemap-index.xml')
      return void res
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(sitemapIndex([`${origin}/sitemap-a.xml`, `${origin}/sitemap-b.xml.gz`, `${origin}/sitemap-gone.xml`]));
    if (path === '/sitemap-a.xml')
      return void res
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(sitemap([`${origin}/leaf/a1`, `${origin}/leaf/dead`, `${origin}/leaf/a2`]));
    if (path === '/sitemap-b.xml.gz')
      return void res
        .writeHead(200, { 'content-type': 'application/gzip' })
        .end(gzipSync(sitemap([`${origin}/leaf/b1`])));
    if (path === '/leaf/dead' || path === '/sitemap-gone.xml') return void res.writeHead(404).end('gone');
    if (
      path.startsWith('/leaf/') ||
      path.startsWith('/trap/') ||
      path.endsWith('-target') ||
      path.startsWith('/base-target/') ||
      ['/file.private', '/file.private.html', '/search', '/frag', '/variant', '/pct%2Fx', '/dir/child'].includes(path)
    )
      return html(res, page(path, '<p>a page</p>'));
    res.writeHead(404).end('not here');
  };

  const server: Server = createServer((req, res) => {
    const key = req.url ?? '/';
    hits.set(key, (hits.get(key) ?? 0) + 1);
    routes(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    otherOrigin,
    hits,
    otherHits: () => otherHits,
    hugeBytesSent: () => hugeSent,
    count: (prefix) => [...hits].filter(([k]) => k.startsWith(prefix)).reduce((n, [, v]) => n + v, 0),
    close: async () => {
      server.closeAllConnections();
      other.closeAllConnections();
      await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => other.close(r))]);
    },
  };
}
