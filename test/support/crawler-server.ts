/**
 * A programmable crawler API on loopback for the client's tests: it parses what the client
 * sends as the spec and DECISIONS say (multipart with busboy, the key in the query) and
 * answers what each test queues.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import busboy from 'busboy';
import { listenLoopback } from './loopback.js';

export interface Received {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Multipart parts by name, for POST /crawl. */
  parts: Record<string, { text: string; contentType: string; filename?: string | undefined }>;
  /** A JSON body, for other requests. */
  json?: unknown;
  raw: string;
}

export type Reply = (res: ServerResponse, req: Received) => void | Promise<void>;

export interface CrawlerServer {
  url: string;
  received: Received[];
  /** Answer the next request to `route` (`METHOD /path`) this way; once each. */
  queue(route: string, ...replies: Reply[]): void;
  /** Answer every request to `route` this way once the queue is empty. */
  fallback(route: string, reply: Reply): void;
  close(): Promise<void>;
}

export const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  (res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };

export async function startCrawlerServer(): Promise<CrawlerServer> {
  const received: Received[] = [];
  const queues = new Map<string, Reply[]>();
  const fallbacks = new Map<string, Reply>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const entry: Received = {
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      parts: {},
      raw: '',
    };
    const finish = async () => {
      received.push(entry);
      const route = `${entry.method} ${entry.path}`;
      const reply = queues.get(route)?.shift() ?? fallbacks.get(route);
      if (!reply) {
        json(404, { message: `no reply for ${route}`, code: 'ERR::TEST::NO_ROUTE', http_status_code: 404 })(res, entry);
        return;
      }
      await reply(res, entry);
    };
    if ((req.headers['content-type'] ?? '').startsWith('multipart/form-data')) {
      const bb = busboy({ headers: req.headers, limits: { fileSize: 1 << 30, fieldSize: 1 << 30 } });
      bb.on('field', (name, value, info) => {
        entry.parts[name] = { text: value, contentType: info.mimeType };
      });
      bb.on('file', (name, stream, info) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          entry.parts[name] = {
            text: Buffer.concat(chunks).toString('utf8'),
            contentType: info.mimeType,
            filename: info.filename,
          };
        });
      });
      bb.on('close', () => void finish());
      req.pipe(bb);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      entry.raw = Buffer.concat(chunks).toString('utf8');
      if (entry.raw) {
        try {
          entry.json = JSON.parse(entry.raw);
        } catch {}
      }
      void finish();
    });
  });
  const loopback = await listenLoopback(server);
  return {
    url: `http://127.0.0.1:${loopback.port}`,
    received,
    queue: (route, ...replies) => queues.set(route, [...(queues.get(route) ?? []), ...replies]),
    fallback: (route, reply) => fallbacks.set(route, reply),
    close: loopback.close,
  };
}
