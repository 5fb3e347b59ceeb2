/** A crawl's artifacts: HAR 1.2 as JSON, and WARC 1.1 as gzip-compressed records. */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { EmulatedCrawl } from './crawl.js';
import { bodyOf } from './formats.js';

const STATUS_TEXT: Record<number, string> = { 200: 'OK', 404: 'Not Found', 500: 'Internal Server Error' };

export function har(crawl: EmulatedCrawl): string {
  const entries = [...crawl.pages.values()]
    .filter((p) => p.http_status !== undefined)
    .map((p) => ({ p, html: bodyOf(p, p.html) ?? '' }))
    .map(({ p, html }) => ({
      startedDateTime: p.fetched_at,
      time: p.duration_ms ?? 0,
      request: {
        method: 'GET',
        url: p.url,
        httpVersion: 'HTTP/1.1',
        headers: [],
        queryString: [],
        cookies: [],
        headersSize: -1,
        bodySize: 0,
      },
      response: {
        status: p.http_status,
        statusText: STATUS_TEXT[p.http_status ?? 0] ?? '',
        httpVersion: 'HTTP/1.1',
        headers: Object.entries(p.headers ?? {}).map(([name, value]) => ({ name, value })),
        cookies: [],
        content: { size: Buffer.byteLength(html), mimeType: p.content_type ?? '', text: html },
        redirectURL: '',
        headersSize: -1,
        bodySize: Buffer.byteLength(html),
      },
      cache: {},
      timings: { send: 0, wait: p.duration_ms ?? 0, receive: 0 },
    }));
  return JSON.stringify({
    log: { version: '1.2', creator: { name: 'cloud-browser emulator', version: '1' }, pages: [], entries },
  });
}

function record(
  type: string,
  uri: string | undefined,
  date: string,
  block: Buffer,
  extra: Record<string, string> = {},
): Buffer {
  const headers = [
    'WARC/1.1',
    `WARC-Type: ${type}`,
    `WARC-Record-ID: <urn:uuid:${randomUUID()}>`,
    `WARC-Date: ${date}`,
    ...(uri ? [`WARC-Target-URI: ${uri}`] : []),
    ...Object.entries(extra).map(([k, v]) => `${k}: ${v}`),
    `Content-Length: ${block.length}`,
  ].join('\r\n');
  // Each record is its own gzip member, as WARC readers expect of .warc.gz.
  return gzipSync(Buffer.concat([Buffer.from(`${headers}\r\n\r\n`), block, Buffer.from('\r\n\r\n')]));
}

/** Yields the WARC file a record at a time, so the whole artifact is never held at once. */
export function* warc(crawl: EmulatedCrawl): Generator<Buffer> {
  const date = new Date(crawl.startedAt || Date.now()).toISOString().replace(/\.\d+Z$/, 'Z');
  yield record(
    'warcinfo',
    undefined,
    date,
    Buffer.from(`software: cloud-browser emulator\r\nformat: WARC File Format 1.1\r\n`),
    {
      'Content-Type': 'application/warc-fields',
    },
  );
  for (const p of crawl.pages.values()) {
    if (p.http_status === undefined) continue;
    const body = Buffer.from(bodyOf(p, p.html) ?? '');
    const head = [
      `HTTP/1.1 ${p.http_status} ${STATUS_TEXT[p.http_status] ?? ''}`,
      ...Object.entries(p.headers ?? {})
        .filter(([k]) => !['content-length', 'transfer-encoding', 'content-encoding'].includes(k))
        .map(([k, v]) => `${k}: ${v}`),
      `content-length: ${body.length}`,
    ].join('\r\n');
    const when = (p.fetched_at ?? new Date().toISOString()).replace(/\.\d+Z$/, 'Z');
    yield record('response', p.url, when, Buffer.concat([Buffer.from(`${head}\r\n\r\n`), body]), {
      'Content-Type': 'application/http; msgtype=response',
    });
  }
}
