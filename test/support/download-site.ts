/** A local site of files to download (1 KB, 30 MB, and 150 MB streamed) and a form that takes an upload. */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export const SMALL = randomBytes(1024);
export const LARGE = randomBytes(30 * 1024 * 1024);
export const HUGE_BYTES = 150 * 1024 * 1024;

export interface DownloadSite {
  origin: string;
  /** The bodies of the uploads the form posted, oldest first. */
  uploads: Buffer[];
  close(): void;
}

const PAGE = `<!doctype html><title>files</title>
<a id="small" href="/small.txt">small</a> <a id="large" href="/large.bin">large</a> <a id="huge" href="/huge.bin">huge</a>
<form method="post" action="/upload" enctype="multipart/form-data"><input type="file" id="file" name="file"><button id="send">send</button></form>`;

/** Stream `total` bytes of zeros, as a server of a file too large to hold would. */
function stream(res: import('node:http').ServerResponse, total: number): void {
  const chunk = Buffer.alloc(1024 * 1024);
  let sent = 0;
  res.on('close', () => {
    sent = total;
  });
  const pump = () => {
    while (sent < total) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
}

export async function startDownloadSite(): Promise<DownloadSite> {
  const uploads: Buffer[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'POST' && path === '/upload') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        uploads.push(Buffer.concat(chunks));
        res.writeHead(200, { 'content-type': 'text/html' }).end('<title>uploaded</title>');
      });
      return;
    }
    if (path === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    const headers = {
      'content-type': 'application/octet-stream',
      'content-disposition': `attachment; filename="${path.slice(1)}"`,
    };
    if (path === '/huge.bin') {
      res.writeHead(200, { ...headers, 'content-length': String(HUGE_BYTES) });
      return stream(res, HUGE_BYTES);
    }
    const body = path === '/small.txt' ? SMALL : path === '/large.bin' ? LARGE : undefined;
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { ...headers, 'content-length': String(body.length) }).end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    uploads,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
