/**
 * A crawler service on loopback that speaks only the live wire, as the vendor's official SDKs
 * read it (npm scrapfly-sdk 0.11 `crawlerresult.ts`, `client.ts`; the Rust SDK's
 * `result/crawler.rs`, `client.rs`): `crawler_uuid` and `is_finished` only, text URL pages,
 * the contents map with `links.next`, `multipart/related` batches, `crawl_ids`, JSON-string
 * tokens with `source` frames and keep-alive comments, refresh blocks at the top level, and
 * errors as the envelope alone. None of the spec's own names: a client that needs them fails.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import busboy from 'busboy';
import { listenLoopback } from './loopback.js';

export interface LiveWire {
  url: string;
  key: string;
  /** Every request, method and path with the query (key included), in order. */
  requests: { method: string; path: string; query: URLSearchParams; body: string; type: string }[];
  close(): Promise<void>;
}

interface FakeCrawl {
  id: string;
  polls: number;
  visited: string[];
  failed: [string, string][];
  cancelled: boolean;
  refresh: { enabled: boolean; interval_seconds: number; generation: number };
}

function envelope(res: ServerResponse, status: number, code: string, message: string): void {
  const body = { status: 'error', http_code: status, reason: 'Error', error_id: randomUUID(), message, code };
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function read(req: IncomingMessage): Promise<{ text: string; parts: Record<string, string> }> {
  if ((req.headers['content-type'] ?? '').startsWith('multipart/form-data')) {
    const parts: Record<string, string> = {};
    await new Promise<void>((resolve, reject) => {
      const bb = busboy({ headers: req.headers });
      bb.on('file', (name, stream) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          parts[name] = Buffer.concat(chunks).toString('utf8');
        });
      });
      bb.on('field', (name, value) => {
        parts[name] = value;
      });
      bb.on('close', resolve);
      bb.on('error', reject);
      req.pipe(bb);
    });
    return { text: '', parts };
  }
  const chunks: Buffer[] = [];
  for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
  return { text: Buffer.concat(chunks).toString('utf8'), parts: {} };
}

/** Start the fake; each crawl has `pages` visited URLs and two failed ones (one with a comma). */
export async function startLiveWire(pages = 250): Promise<LiveWire> {
  const key = `live-${randomUUID()}`;
  const crawls = new Map<string, FakeCrawl>();
  const requests: LiveWire['requests'] = [];
  let origin = '';
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const { text, parts } = await read(req);
      requests.push({
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        body: text,
        type: req.headers['content-type'] ?? '',
      });
      if (url.searchParams.get('key') !== key) return envelope(res, 401, 'ERR::AUTH::INVALID_KEY', 'invalid key');
      const route = `${req.method} ${url.pathname.replace(/^\/crawl\/[^/]+/, (m) => (m === '/crawl/search' || m === '/crawl/prompt' ? m : '/crawl/:id'))}`;
      if (route === 'POST /crawl') {
        const config = parts.config ? JSON.parse(parts.config) : JSON.parse(text || '{}');
        if ('key' in config) return envelope(res, 400, 'ERR::CRAWLER::INVALID_CONFIG', 'key in body');
        const id = randomUUID();
        const visited = Array.from({ length: pages }, (_, i) => `https://site.test/p/${i}`);
        crawls.set(id, {
          id,
          polls: 0,
          visited,
          failed: [
            ['https://site.test/broken', 'http_404'],
            ['https://site.test/a,b', 'robots_txt'],
          ],
          cancelled: false,
          refresh: {
            enabled: config.refresh === true,
            interval_seconds: config.refresh_interval ?? 86400,
            generation: 0,
          },
        });
        return sendJson(res, 200, { crawler_uuid: id, status: 'PENDING' });
      }
      if (route === 'POST /crawl/search') {
        const body = JSON.parse(text);
        const unknown = Object.keys(body).find(
          (k) => !['crawl_ids', 'query', 'limit', 'mode', 'filters', 'cursor'].includes(k),
        );
        if (unknown) return envelope(res, 400, 'ERR::CRAWLER::INVALID_REQUEST', `unknown field ${unknown}`);
        const [first] = body.crawl_ids as string[];
        return sendJson(res, 200, {
          query: body.query,
          mode: 'hybrid',
          limit: body.limit ?? 10,
          completeness: 'exact',
          crawls: [{ crawler_uuid: first, documents: pages, vectors: pages * 2 }],
          results: [
            {
              rank: 1,
              score: 0.031,
              scores: { fts: 4.2, vector: 0.8, rrf: 0.031 },
              crawler_uuid: first,
              url: 'https://site.test/p/3',
              title: 'Pricing',
              chunk_id: 0,
              text: 'A subscription costs 9 euros.',
              contents_url: `${origin}/crawl/${first}/contents?url=https%3A%2F%2Fsite.test%2Fp%2F3`,
            },
          ],
          skipped: (body.crawl_ids as string[]).slice(1).map((id) => ({
            crawler_uuid: id,
            reason: 'search_not_ready',
            status: 'BUILDING',
          })),
          stats: { duration_ms: 3 },
          cursor: null,
        });
      }
      if (route === 'POST /crawl/prompt') {
        const body = JSON.parse(text);
        if (!Array.isArray(body.crawl_ids) || body.generation?.stream !== true)
          return envelope(res, 400, 'ERR::CRAWLER::INVALID_REQUEST', 'crawl_ids and generation.stream are required');
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(':keepalive\n\n');
        res.write(
          `event: source\ndata: ${JSON.stringify({ id: 1, crawler_uuid: body.crawl_ids[0], url: 'https://site.test/p/3', title: 'Pricing', score: 0.9 })}\n\n`,
        );
        for (const t of ['A', ' subscription', ' costs', ' "9"', ' euros [1]']) {
          res.write(`event: token\ndata: ${JSON.stringify(t)}\n\n:keepalive\n\n`);
        }
        res.end(
          `event: done\ndata: ${JSON.stringify({ sources_used: [1], sources_dropped: 0, truncated: false })}\n\n`,
        );
        return;
      }
      const id = url.pathname.split('/')[2] ?? '';
      const crawl = crawls.get(id);
      if (!crawl) return envelope(res, 404, 'ERR::CRAWLER::NOT_FOUND', 'crawl not found');
      const action = `${req.method} ${url.pathname.split('/').slice(3).join('/')}`;
      if (action === 'GET status') {
        crawl.polls++;
        const done = crawl.cancelled || crawl.polls >= 3;
        return sendJson(res, 200, {
          crawler_uuid: crawl.id,
          status: crawl.cancelled ? 'CANCELLED' : done ? 'DONE' : 'RUNNING',
          is_finished: done,
          is_success: done ? !crawl.cancelled : null,
          state: {
            urls_visited: done ? pages : 10 * crawl.polls,
            urls_extracted: pages,
            urls_failed: 2,
            urls_skipped: 0,
            urls_to_crawl: done ? 0 : pages,
            api_credit_used: pages,
            duration: crawl.polls,
            start_time: 1_800_000_000,
            stop_time: done ? 1_800_000_030 : null,
            stop_reason: crawl.cancelled ? 'user_cancelled' : done ? 'no_more_urls' : null,
          },
        });
      }
      if (action === 'GET urls') {
        const status = url.searchParams.get('status') ?? 'visited';
        const page = Number(url.searchParams.get('page') ?? '1');
        const perPage = Number(url.searchParams.get('per_page') ?? '100');
        const lines =
          status === 'failed' ? crawl.failed.map(([u, r]) => `${u},${r}`) : status === 'visited' ? crawl.visited : [];
        const slice = lines.slice((page - 1) * perPage, page * perPage);
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(slice.map((l) => `${l}\n`).join(''));
        return;
      }
      if (action === 'GET contents') {
        const format = url.searchParams.get('formats') ?? 'html';
        if (url.searchParams.get('plain') === 'true') {
          const target = url.searchParams.get('url') ?? '';
          if (!crawl.visited.includes(target))
            return envelope(res, 404, 'ERR::CRAWLER::CONTENT_NOT_FOUND', 'not crawled');
          res.writeHead(200, { 'content-type': 'text/markdown' }).end(`# ${target}`);
          return;
        }
        const limit = Number(url.searchParams.get('limit') ?? '10');
        const offset = Number(url.searchParams.get('offset') ?? '0');
        const slice = crawl.visited.slice(offset, offset + limit);
        const link = (at: number) =>
          `${origin}/crawl/${crawl.id}/contents?formats=${format}&limit=${limit}&offset=${at}`;
        return sendJson(res, 200, {
          contents: Object.fromEntries(slice.map((u) => [u, { [format]: `# ${u}` }])),
          links: {
            crawled_urls: `${origin}/crawl/${crawl.id}/urls`,
            next: offset + limit < crawl.visited.length ? link(offset + limit) : null,
            prev: offset > 0 ? link(Math.max(0, offset - limit)) : null,
          },
        });
      }
      if (action === 'POST contents/batch') {
        const formats = (url.searchParams.get('formats') ?? '').split(',');
        const types: Record<string, string> = { html: 'text/html', markdown: 'text/markdown', text: 'text/plain' };
        const body = text
          .split('\n')
          .filter((u) => crawl.visited.includes(u))
          .flatMap((u) =>
            formats.map((f) => `--LIVE\r\nContent-Type: ${types[f]}\r\nContent-Location: ${u}\r\n\r\n${f}:${u}\r\n`),
          )
          .join('');
        res.writeHead(200, { 'content-type': 'multipart/related; boundary=LIVE' }).end(`${body}--LIVE--\r\n`);
        return;
      }
      if (action === 'GET artifact') {
        res.writeHead(200, { 'content-type': 'application/gzip' }).end(Buffer.from('WARC/1.1\r\n'));
        return;
      }
      if (action === 'POST cancel') {
        crawl.cancelled = true;
        res.writeHead(202).end();
        return;
      }
      if (action === 'POST refresh') {
        if (!crawl.refresh.enabled) return envelope(res, 400, 'ERR::CRAWLER::REFRESH_NOT_ENABLED', 'refresh is off');
        crawl.refresh.generation++;
        return sendJson(res, 202, { ...crawl.refresh, status: 'RUNNING', next_run_at: null });
      }
      if (action === 'PATCH refresh') {
        const body = JSON.parse(text);
        if (body.refresh !== undefined) crawl.refresh.enabled = body.refresh;
        if (body.refresh_interval !== undefined) crawl.refresh.interval_seconds = body.refresh_interval;
        return sendJson(res, 200, {
          ...crawl.refresh,
          status: crawl.refresh.enabled ? 'SCHEDULED' : 'DISABLED',
          next_run_at: crawl.refresh.enabled ? '2027-01-01T00:00:00Z' : null,
        });
      }
      return envelope(res, 404, 'ERR::NOT_FOUND', 'no route');
    })().catch((e: unknown) => envelope(res, 500, 'ERR::TEST', String(e)));
  });
  const loopback = await listenLoopback(server);
  origin = `http://127.0.0.1:${loopback.port}`;
  return { url: origin, key, requests, close: loopback.close };
}
