/** A small local site for the browser tests: pages, assets of every kind, and a log of requests. */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SiteRequest {
  path: string;
  headers: IncomingHttpHeaders;
}

export interface Site {
  url: string;
  origin: string;
  requests: SiteRequest[];
  paths(): string[];
  close(): Promise<void>;
}

// A 1x1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

const PAGES: Record<string, [string, string | Buffer]> = {
  '/': ['text/html', '<!doctype html><title>Hello from the site</title><h1>hello</h1>'],
  '/assets': [
    'text/html',
    `<!doctype html><title>Assets</title>
<link rel="stylesheet" href="/style.css">
<style>@font-face { font-family: F; src: url(/font.woff2); } body { font-family: F; }</style>
<img src="/image.png"><video src="/video.mp4" autoplay muted></video><audio src="/audio.mp3" autoplay muted></audio>
<p>text</p>`,
  ],
  '/style.css': ['text/css', 'body { color: red }'],
  '/font.woff2': ['font/woff2', Buffer.alloc(64)],
  '/image.png': ['image/png', PNG],
  '/video.mp4': ['video/mp4', Buffer.alloc(256)],
  '/audio.mp3': ['audio/mpeg', Buffer.alloc(256)],
  '/tall': [
    'text/html',
    '<!doctype html><title>Tall</title><div style="height:5000px;background:linear-gradient(red,blue)"></div>',
  ],
};

export async function startSite(): Promise<Site> {
  const requests: SiteRequest[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    requests.push({ path, headers: req.headers });
    if (path === '/set-cookie') {
      res
        .writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'flavour=oatmeal; Path=/' })
        .end('<title>cookie</title>');
      return;
    }
    const page = PAGES[path];
    if (!page) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': page[0], 'cache-control': 'no-store' }).end(page[1]);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/`,
    origin,
    requests,
    paths: () => requests.map((r) => r.path),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
