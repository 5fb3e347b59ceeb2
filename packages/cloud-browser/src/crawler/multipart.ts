/**
 * The `POST /crawl` body (docs/decisions.md D9): JSON, or with `url_list` multipart, streamed, so a huge URL list
 * is never built twice.
 */
import { randomBytes } from 'node:crypto';
import { type CrawlConfig, scanUrlList, toCrawlRequest } from './schema.js';

/** A request body ready for `fetch`. */
export interface EncodedCrawlRequest {
  /** A fresh stream of the body; call again for another attempt. */
  body(): ReadableStream<Uint8Array>;
  contentType: string;
  /** Exact length in bytes, known without building the body. */
  contentLength: number;
}

/**
 * Encode a crawl configuration as the body of `POST /crawl` (docs/decisions.md D9). Without `url_list`: JSON, every
 * parameter but `key`. With it: a multipart form of two file parts, `config` (`config.json`,
 * every parameter but `url_list` and `key`) and `urls` (`urls.txt`, one URL a line), produced a
 * batch of URLs at a time as it is sent.
 *
 * @example
 * const { body, contentType, contentLength } = encodeCrawlRequest({ url_list: urls })
 * await fetch(`${base}/crawl?key=${key}`, { method: 'POST', body: body(), duplex: 'half', headers: { 'content-type': contentType, 'content-length': String(contentLength) } })
 */
export function encodeCrawlRequest(input: CrawlConfig): EncodedCrawlRequest {
  const { config, urls } = toCrawlRequest(input);
  if (!urls) {
    const json = new TextEncoder().encode(JSON.stringify(config));
    return {
      contentType: 'application/json',
      contentLength: json.length,
      body: () =>
        new ReadableStream({
          start(c) {
            c.enqueue(json);
            c.close();
          },
        }),
    };
  }
  const boundary = `cloud-browser-${randomBytes(16).toString('hex')}`;
  const encoder = new TextEncoder();
  const head = encoder.encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="config"; filename="config.json"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(config)}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="urls"; filename="urls.txt"\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n`,
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const { bytes: urlBytes, chunks } = scanUrlList(urls);
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: head.length + urlBytes + tail.length,
    body() {
      let index = 0;
      let stage = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (stage === 0) {
            stage = 1;
            controller.enqueue(head);
            return;
          }
          if (stage === 1 && index < chunks.length) {
            controller.enqueue(chunks[index++] as Uint8Array);
            return;
          }
          controller.enqueue(tail);
          controller.close();
        },
      });
    },
  };
}
