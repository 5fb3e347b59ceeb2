/**
 * Reading a crawl back (docs/decisions.md D10): the text URL listing, the contents map with its links, plain
 * mode, and batches as RFC 2387 `multipart/related`.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONTENT_FORMATS, type ContentFormat } from 'cloud-browser/crawler';
import { isRefusal, type Refusal, readBody, refusal } from '../http.js';
import type { EmulatedCrawl } from './crawl.js';
import { contentOf } from './formats.js';
import type { PageRecord } from './types.js';

const URL_STATUSES = ['visited', 'pending', 'failed', 'skipped'] as const;
/** Content type of each format, in plain mode and in batch parts (docs/decisions.md D10). */
export const FORMAT_TYPES: Record<ContentFormat, string> = {
  html: 'text/html',
  clean_html: 'text/html',
  markdown: 'text/markdown',
  text: 'text/plain',
};

/** A whole number in `[min, max]` from the query, its default when absent, or a refusal. */
function intParam(url: URL, name: string, fallback: number, min: number, max: number): number | Refusal {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === '') return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) {
    return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', `\`${name}\` must be a whole number from ${min} to ${max}`);
  }
  return n;
}

/** The formats the crawl keeps: those it was started with, or all four. */
function kept(crawl: EmulatedCrawl): readonly ContentFormat[] {
  return crawl.config.content_formats?.length ? crawl.config.content_formats : CONTENT_FORMATS;
}

/** The formats asked in `formats=a,b`, or a refusal naming the unknown one. */
function askedFormats(url: URL, fallback: readonly ContentFormat[]): readonly ContentFormat[] | Refusal {
  const raw = url.searchParams.get('formats');
  if (raw === null || raw === '') return fallback;
  const list = raw.split(',').map((f) => f.trim());
  const bad = list.find((f) => !(CONTENT_FORMATS as readonly string[]).includes(f));
  if (bad !== undefined) {
    return refusal(
      400,
      'ERR::CRAWLER::INVALID_FORMAT',
      `unknown format ${JSON.stringify(bad)}: use ${CONTENT_FORMATS.join(', ')}`,
    );
  }
  return list as ContentFormat[];
}

/** A visited page's content in one format, or null where the crawl did not keep it. */
function keptContent(crawl: EmulatedCrawl, page: PageRecord, f: ContentFormat): string | null {
  return kept(crawl).includes(f) ? contentOf(page, f) : null;
}

/**
 * `GET /crawl/{uuid}/urls?status=&page=&per_page=`: text, a URL a line, `url,reason` for
 * failed and skipped; an empty page ends the listing.
 */
export function urlListing(res: ServerResponse, crawl: EmulatedCrawl, url: URL): Refusal | undefined {
  const status = url.searchParams.get('status') ?? 'visited';
  if (!(URL_STATUSES as readonly string[]).includes(status)) {
    return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', `\`status\` must be ${URL_STATUSES.join(', ')}`);
  }
  const page = intParam(url, 'page', 1, 1, Number.MAX_SAFE_INTEGER);
  if (typeof page !== 'number') return page;
  const perPage = intParam(url, 'per_page', 100, 1, 1000);
  if (typeof perPage !== 'number') return perPage;
  const lines: string[] = [];
  const from = (page - 1) * perPage;
  let seen = 0;
  const take = (line: string) => {
    if (seen++ >= from && lines.length < perPage) lines.push(line);
  };
  if (status === 'pending') {
    for (const u of crawl.inFlight) take(u);
    for (const q of crawl.queue) take(q.url);
  } else {
    for (const p of crawl.pages.values()) {
      if (p.status !== status) continue;
      take(status === 'visited' ? p.url : `${p.url},${p.reason ?? 'unknown'}`);
      if (lines.length === perPage) break;
    }
  }
  const text = lines.length ? `${lines.join('\n')}\n` : '';
  res
    .writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) })
    .end(text);
  return undefined;
}

/**
 * `GET /crawl/{uuid}/contents`: the map `{contents: {url: {format: text|null}}, links}` paged by
 * `limit`/`offset`, or with `plain=true` one page's raw content.
 */
export function contents(res: ServerResponse, crawl: EmulatedCrawl, url: URL, apiUrl: string): Refusal | undefined {
  if (url.searchParams.get('plain') === 'true') return plain(res, crawl, url);
  const formats = askedFormats(url, kept(crawl));
  if (isRefusal(formats)) return formats;
  const limit = intParam(url, 'limit', 10, 1, 50);
  if (typeof limit !== 'number') return limit;
  const offset = intParam(url, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  if (typeof offset !== 'number') return offset;
  const only = url.searchParams.get('url');
  const pages = [...crawl.pages.values()].filter((p) => p.status === 'visited' && (!only || p.url === only));
  const slice = pages.slice(offset, offset + limit);
  const map: Record<string, Record<string, string | null>> = {};
  for (const p of slice) {
    const content: Record<string, string | null> = {};
    for (const f of formats) content[f] = keptContent(crawl, p, f);
    if (p.extracted) content.extracted_data = JSON.stringify(p.extracted);
    map[p.url] = content;
  }
  // Links name the pages without the key (docs/decisions.md D10): a client adds its own.
  const link = (at: number) => {
    const next = new URL(`${apiUrl}/crawl/${crawl.uuid}/contents`);
    next.searchParams.set('formats', formats.join(','));
    next.searchParams.set('limit', String(limit));
    next.searchParams.set('offset', String(at));
    if (only) next.searchParams.set('url', only);
    return next.href;
  };
  const text = JSON.stringify({
    contents: map,
    links: {
      crawled_urls: `${apiUrl}/crawl/${crawl.uuid}/urls`,
      next: offset + limit < pages.length ? link(offset + limit) : null,
      prev: offset > 0 ? link(Math.max(0, offset - limit)) : null,
    },
  });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  return undefined;
}

/** Plain mode: one URL, one format, the raw content; 404 when not crawled or not kept. */
function plain(res: ServerResponse, crawl: EmulatedCrawl, url: URL): Refusal | undefined {
  const target = url.searchParams.get('url');
  const formats = askedFormats(url, ['html']);
  if (isRefusal(formats)) return formats;
  if (!target || formats.length !== 1) {
    return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', 'plain mode takes one `url` and one format in `formats`');
  }
  const f = formats[0] as ContentFormat;
  const page = crawl.pages.get(target);
  const text = page ? keptContent(crawl, page, f) : null;
  if (text === null) {
    return refusal(
      404,
      'ERR::CRAWLER::CONTENT_NOT_FOUND',
      page?.status === 'visited' ? `the crawl did not keep the ${f} format` : 'that URL was not crawled',
    );
  }
  res
    .writeHead(200, { 'content-type': `${FORMAT_TYPES[f]}; charset=utf-8`, 'content-length': Buffer.byteLength(text) })
    .end(text);
  return undefined;
}

/**
 * `POST /crawl/{uuid}/contents/batch?formats=`: 1 to 100 URLs, one a line, answered as
 * `multipart/related` (RFC 2387), one part a found URL and format.
 */
export async function batch(
  req: IncomingMessage,
  res: ServerResponse,
  crawl: EmulatedCrawl,
  url: URL,
): Promise<Refusal | undefined> {
  const formats = askedFormats(url, []);
  if (isRefusal(formats)) return formats;
  if (formats.length === 0)
    return refusal(400, 'ERR::CRAWLER::INVALID_REQUEST', '`formats` must name one or more formats');
  const body = await readBody(req, 1 << 20);
  if (!Buffer.isBuffer(body)) return body;
  const urls = body
    .toString('utf8')
    .split(/\r?\n/)
    .map((u) => u.trim())
    .filter(Boolean);
  if (urls.length < 1 || urls.length > 100) {
    return refusal(
      400,
      'ERR::CRAWLER::INVALID_REQUEST',
      `a batch takes 1 to 100 URLs, one a line (got ${urls.length})`,
    );
  }
  const boundary = `batch-${randomBytes(12).toString('hex')}`;
  const parts: string[] = [];
  for (const u of new Set(urls)) {
    const page = crawl.pages.get(u);
    if (!page) continue;
    for (const f of formats) {
      const text = keptContent(crawl, page, f);
      if (text === null) continue;
      parts.push(
        `--${boundary}\r\nContent-Type: ${FORMAT_TYPES[f]}; charset=utf-8\r\nContent-Location: ${u}\r\n\r\n${text}\r\n`,
      );
    }
  }
  const text = `${parts.join('')}--${boundary}--\r\n`;
  res
    .writeHead(200, {
      'content-type': `multipart/related; boundary=${boundary}; type="text/html"`,
      'content-length': Buffer.byteLength(text),
    })
    .end(text);
  return undefined;
}
