/**
 * The emulated crawler's page fetch: node:http(s) with keep-alive, redirects followed and bodies
 * decoded, as `fetch` would, at a fraction of its cost a request (no web streams, no
 * Request/Response objects): a crawl is thousands of small requests.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** A fetched page. */
export interface FetchedPage {
  status: number;
  ok: boolean;
  /** The URL the answer came from, after redirects. */
  url: string;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: string;
}

const MAX_REDIRECTS = 20;

/** Keep-alive agents for one crawl; `close` ends their sockets. */
export class PageFetcher {
  private readonly http: HttpAgent;
  private readonly https: HttpsAgent;

  constructor(concurrency: number) {
    this.http = new HttpAgent({ keepAlive: true, maxSockets: concurrency });
    this.https = new HttpsAgent({ keepAlive: true, maxSockets: concurrency });
  }

  /**
   * GET `url`, following redirects; fails on a network error, when `signal` aborts (the crawl's:
   * the listener lives as long as this one page) or after `timeout` ms for the whole page.
   */
  async get(
    url: string,
    options: { headers: Record<string, string>; signal: AbortSignal; timeout: number },
  ): Promise<FetchedPage> {
    const page = new AbortController();
    const abort = () => page.abort(options.signal.reason);
    options.signal.addEventListener('abort', abort, { once: true });
    const timer = setTimeout(() => page.abort(new Error(`no answer within ${options.timeout} ms`)), options.timeout);
    try {
      let current = new URL(url);
      for (let hop = 0; ; hop++) {
        const res = await this.once(current, options.headers, page.signal);
        const location = res.headers.location;
        if (res.statusCode && [301, 302, 303, 307, 308].includes(res.statusCode) && location) {
          res.resume();
          if (hop === MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
          current = new URL(location, current);
          if (current.protocol !== 'http:' && current.protocol !== 'https:')
            throw new Error(`a redirect to ${current.protocol}`);
          continue;
        }
        const body = await readBody(res);
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        const status = res.statusCode ?? 0;
        return { status, ok: status >= 200 && status < 300, url: current.href, headers, body };
      }
    } catch (error) {
      // The request's own AbortError says only "aborted": give the reason instead.
      throw page.signal.aborted ? page.signal.reason : error;
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', abort);
    }
  }

  /** One request; the signal destroys it, and with it the answer's body, when it aborts. */
  private once(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const req = (secure ? httpsRequest : httpRequest)(url, {
        method: 'GET',
        agent: secure ? this.https : this.http,
        headers: { 'accept-encoding': 'gzip, deflate, br', accept: '*/*', ...headers },
        signal,
      });
      req.on('response', resolve);
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

/** The body as text (UTF-8), its Content-Encoding undone. */
async function readBody(res: IncomingMessage): Promise<string> {
  const encodings = (res.headers['content-encoding'] ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e && e !== 'identity');
  let stream: NodeJS.ReadableStream = res;
  // Undone last first, as they were applied first to last.
  for (const encoding of encodings.reverse()) {
    const decoder =
      encoding === 'gzip' || encoding === 'x-gzip'
        ? createGunzip()
        : encoding === 'deflate'
          ? createInflate()
          : encoding === 'br'
            ? createBrotliDecompress()
            : undefined;
    if (!decoder) throw new Error(`unsupported Content-Encoding ${encoding}`);
    stream.on('error', (e) => decoder.destroy(e as Error));
    stream = stream.pipe(decoder);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}
