/**
 * The emulated crawler's page fetch: node:http(s) with keep-alive, redirects followed and bodies
 * decoded, as `fetch` would, at a fraction of its cost a request (no web streams, no
 * Request/Response objects): a crawl is thousands of small requests. Unlike `fetch`, every
 * redirect is put to the crawl before it is followed, and a body is bounded while it streams,
 * on the wire and after decoding, so that a bomb or a huge file costs little memory.
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
  /** The URLs that redirected, in order, before `url`. */
  redirects: string[];
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The bytes, Content-Encoding undone. */
  body: Buffer;
}

/** Why a URL could not be fetched, in one word (the listing's reason) and in a sentence. */
export class FetchFailure extends Error {
  override readonly name = 'FetchFailure';
  constructor(
    readonly reason: 'too_large' | 'redirect_loop' | 'too_many_redirects' | 'bad_content_encoding' | 'bad_redirect',
    message: string,
  ) {
    super(message);
  }
}

/** A redirect the crawl refused to follow: `from` redirected to `to`, out of bounds for `reason`. */
export class RedirectRefused extends Error {
  override readonly name = 'RedirectRefused';
  constructor(
    readonly from: string,
    readonly to: string,
    readonly reason: string,
    readonly redirects: string[],
  ) {
    super(`a redirect to a URL the crawl may not fetch (${reason})`);
  }
}

/** Options of {@link PageFetcher.get}. */
export interface GetOptions {
  headers: Record<string, string>;
  /** The crawl's: the listener lives as long as this one page. */
  signal: AbortSignal;
  /** For the whole page, redirects included, ms. */
  timeout: number;
  /** The most bytes of a body, on the wire and after decoding. */
  maxBytes: number;
  /** @default 10 */
  maxRedirects?: number;
  /** Asked before each redirect is followed: a reason refuses it. */
  follow?: (url: URL) => string | undefined | Promise<string | undefined>;
}

/** Keep-alive agents for one crawl; `close` ends their sockets. */
export class PageFetcher {
  private readonly http: HttpAgent;
  private readonly https: HttpsAgent;

  constructor(concurrency: number) {
    this.http = new HttpAgent({ keepAlive: true, maxSockets: concurrency });
    this.https = new HttpsAgent({ keepAlive: true, maxSockets: concurrency });
  }

  /**
   * GET `url`, following redirects the crawl allows; fails on a network error, a body over
   * `maxBytes`, a redirect loop or chain, when `signal` aborts or after `timeout` ms.
   */
  async get(url: string, options: GetOptions): Promise<FetchedPage> {
    const page = new AbortController();
    const abort = () => page.abort(options.signal.reason);
    options.signal.addEventListener('abort', abort, { once: true });
    const timer = setTimeout(() => page.abort(new Error(`no answer within ${options.timeout} ms`)), options.timeout);
    const maxRedirects = options.maxRedirects ?? 10;
    const redirects: string[] = [];
    try {
      let current = new URL(url);
      for (;;) {
        const res = await this.once(current, options.headers, page.signal);
        const location = res.headers.location;
        if (res.statusCode && [301, 302, 303, 307, 308].includes(res.statusCode) && location) {
          res.resume();
          redirects.push(current.href);
          current = nextHop(current, location, redirects, maxRedirects);
          const refused = await options.follow?.(current);
          if (refused)
            throw new RedirectRefused(redirects[redirects.length - 1] ?? url, current.href, refused, redirects);
          continue;
        }
        const body = await readBody(res, options.maxBytes);
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        const status = res.statusCode ?? 0;
        return { status, ok: status >= 200 && status < 300, url: current.href, redirects, headers, body };
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

/** Where a redirect goes, or why it goes nowhere. */
function nextHop(current: URL, location: string, redirects: readonly string[], maxRedirects: number): URL {
  let next: URL;
  try {
    next = new URL(location, current);
  } catch {
    throw new FetchFailure('bad_redirect', 'a redirect to something that is not a URL');
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:')
    throw new FetchFailure('bad_redirect', `a redirect to ${next.protocol}`);
  next.hash = '';
  if (redirects.includes(next.href))
    throw new FetchFailure('redirect_loop', `a redirect loop after ${redirects.length} redirects`);
  if (redirects.length > maxRedirects)
    throw new FetchFailure('too_many_redirects', `more than ${maxRedirects} redirects`);
  return next;
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(bytes % (1024 * 1024) ? 1 : 0)} MB`;

/** The body's bytes, its Content-Encoding undone, refused once over `maxBytes` either way. */
async function readBody(res: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  const tooLarge = (what: string) =>
    new FetchFailure('too_large', `the body is over the crawler's limit of ${megabytes(maxBytes)} ${what}`);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    throw tooLarge('(Content-Length)');
  }
  const encodings = (res.headers['content-encoding'] ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e && e !== 'identity');
  let wire = 0;
  let stream: NodeJS.ReadableStream = res;
  res.on('data', (chunk: Buffer) => {
    wire += chunk.length;
    if (wire > maxBytes) res.destroy(tooLarge('on the wire'));
  });
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
    if (!decoder) {
      res.destroy();
      throw new FetchFailure('bad_content_encoding', `unsupported Content-Encoding ${encoding}`);
    }
    stream.on('error', (e) => decoder.destroy(e as Error));
    stream = stream.pipe(decoder);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw tooLarge(encodings.length ? 'after decoding' : 'on the wire');
      chunks.push(chunk);
    }
  } catch (error) {
    res.destroy();
    if (error instanceof FetchFailure) throw error;
    if (encodings.length && !res.errored)
      throw new FetchFailure('bad_content_encoding', `a body that fails to decode as ${encodings.join(', ')}`);
    throw res.errored instanceof FetchFailure ? res.errored : error;
  }
  return Buffer.concat(chunks);
}
