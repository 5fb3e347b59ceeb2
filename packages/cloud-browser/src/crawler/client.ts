/**
 * The crawler client (spec parts 4, 5, 7; docs/decisions.md D8 to docs/decisions.md D13): every crawl operation on the live wire,
 * with retries, waiting, lazy paging of URLs and contents, batches, streamed artifacts and
 * prompt streams.
 */
import { meros } from 'meros/browser';
import { ConfigError, type ConfigIssue, CrawlerError, isServiceError, ServiceError, TimeoutError } from '../errors.js';
import { show } from '../internal/issues.js';
import { numberIssues } from '../internal/knobs.js';
import { registerSecret } from '../internal/redact.js';
import {
  type CallOptions,
  type ClientKnobs,
  type Clock,
  clientIssues,
  type RequestSpec,
  type ServiceClient,
  serviceClientFor,
} from '../internal/service-client.js';
import { ENV, env } from '../session/url.js';
import { encodeCrawlRequest } from './multipart.js';
import { PromptStream } from './prompt.js';
import { CONTENT_FORMATS, type ContentFormat, type CrawlConfig, REFRESH_INTERVAL_RANGE } from './schema.js';
import {
  type CrawlContent,
  type CrawlRefreshState,
  type CrawlStatus,
  type CrawlUrl,
  type CrawlUrlStatus,
  readRefreshState,
  readSearch,
  readStatus,
  readUrlLines,
  SEARCH_MODES,
  type SearchMode,
  type SearchResponse,
  URL_STATUSES,
} from './wire.js';

/** Options of {@link CrawlerClient}. */
export interface CrawlerClientOptions extends ClientKnobs {
  /** The API key, sent as the `key` query parameter. @default process.env.CLOUD_API_KEY */
  key?: string | undefined;
  /** The service's base URL. @default process.env.CLOUD_API_URL */
  baseUrl?: string | undefined;
}

/** Defaults of {@link CrawlerClientOptions} and of the methods' options. */
export const CRAWLER_CLIENT_DEFAULTS = {
  maxRetries: 3,
  timeout: 60_000,
  pollInterval: 2000,
  perPage: 100,
} as const;

export type { CallOptions, Clock };

/** Options of {@link CrawlerClient.wait}. */
export interface WaitOptions extends CallOptions {
  /** Milliseconds between polls. @default 2000 */
  pollInterval?: number | undefined;
  /** Give up after this many milliseconds (the crawl goes on). @default no limit */
  timeout?: number | undefined;
  onProgress?: ((status: CrawlStatus) => void) | undefined;
}

/** What {@link CrawlerClient.search} asks (docs/decisions.md D10). */
export interface SearchParams {
  /** The crawls to search, one or more ids. Sent as `crawl_ids`. */
  crawls: readonly string[];
  query: string;
  /** 1 to 50. @default the service's, 10 */
  limit?: number | undefined;
  mode?: SearchMode | undefined;
  filters?: { url_prefix?: string; host?: string; [filter: string]: unknown } | undefined;
  /** The `cursor` of the previous page. */
  cursor?: string | undefined;
}

/** What {@link CrawlerClient.prompt} asks (docs/decisions.md D10). */
export interface PromptParams {
  /** The crawls to ask, one or more ids. Sent as `crawl_ids`. */
  crawls: readonly string[];
  prompt: string;
  /** How passages are retrieved for the answer. */
  search?: { limit?: number; mode?: SearchMode; filters?: SearchParams['filters'] } | undefined;
  /** The generation model, when the service offers a choice. */
  model?: string | undefined;
}

/** A change to a crawl's refresh schedule (`PATCH /crawl/{uuid}/refresh`). */
export interface RefreshSettings {
  refresh?: boolean | undefined;
  /** 3600 to 7776000 seconds. */
  refresh_interval?: number | undefined;
}

/** Content type of each format in plain mode and in batch parts (docs/decisions.md D10). */
const FORMAT_TYPES: Record<ContentFormat, string> = {
  html: 'text/html',
  clean_html: 'text/html',
  markdown: 'text/markdown',
  text: 'text/plain',
};

const badResponse = (message: string, status: number) =>
  ServiceError.generate({ code: 'ERR::CRAWLER::BAD_RESPONSE', message }, { status });

function refuse(subject: string, issues: ConfigIssue[]): void {
  if (issues.length > 0) throw new ConfigError(subject, issues);
}

function formatIssues(formats: unknown, option = 'formats', required = false): ConfigIssue[] {
  if (formats === undefined && !required) return [];
  if (!Array.isArray(formats) || (required && formats.length === 0)) {
    return [
      { option, message: `\`${option}\` must be a list of ${CONTENT_FORMATS.join(', ')} (got ${show(formats)})` },
    ];
  }
  const wrong = formats.find((f) => !CONTENT_FORMATS.includes(f as never));
  return wrong === undefined
    ? []
    : [{ option, message: `\`${option}\` entries must be ${CONTENT_FORMATS.join(', ')} (got ${show(wrong)})` }];
}

/**
 * Split formats so that no two in one batch share a content type: a batch part is told apart
 * by its `Content-Type` alone, and html and clean_html are both `text/html`.
 */
function byContentType(formats: readonly ContentFormat[]): ContentFormat[][] {
  const groups: ContentFormat[][] = [];
  for (const f of new Set(formats)) {
    const group = groups.find((g) => !g.some((other) => FORMAT_TYPES[other] === FORMAT_TYPES[f]));
    if (group) group.push(f);
    else groups.push([f]);
  }
  return groups;
}

/**
 * A client of the crawler API, speaking the wire the live service speaks. The key always
 * travels as the `key` query parameter and never appears in an error or log.
 *
 * @example
 * const crawler = new CrawlerClient();
 * const { uuid } = await crawler.start({ url: 'https://example.com', page_limit: 100, search: true });
 * await crawler.wait(uuid, { onProgress: (s) => console.log(s.state.urls_visited) });
 * for await (const page of crawler.contents(uuid, { formats: ['markdown'] })) console.log(page.url);
 */
export class CrawlerClient {
  readonly baseUrl: string;
  readonly #http: ServiceClient;

  constructor(options: CrawlerClientOptions = {}) {
    const key = options.key ?? env(ENV.apiKey);
    const baseUrl = options.baseUrl ?? env(ENV.apiUrl);
    const issues = clientIssues(options, key, ENV.apiKey);
    if (!baseUrl || !URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
      issues.push({
        option: 'baseUrl',
        message: `\`baseUrl\` must be the service's http(s) address: pass it, or set ${ENV.apiUrl}`,
      });
    }
    refuse('crawler client options', issues);
    this.baseUrl = (baseUrl as string).replace(/\/+$/, '');
    this.#http = serviceClientFor(options, key as string, this.baseUrl, CRAWLER_CLIENT_DEFAULTS, 'crawler');
  }

  #request(method: string, path: string, spec: RequestSpec): Promise<Response> {
    return this.#http.request(method, path, spec);
  }

  /** Printing the client never shows the key. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `CrawlerClient { baseUrl: '${this.baseUrl}' }`;
  }

  /**
   * Start a crawl (`POST /crawl`, docs/decisions.md D9): JSON, or with `url_list` a multipart form whose URLs
   * stream a batch at a time. Retried only when the service says it may be.
   */
  async start(
    config: CrawlConfig,
    options: CallOptions = {},
  ): Promise<{ uuid: string; crawler_uuid: string; [field: string]: unknown }> {
    const encoded = encodeCrawlRequest(config);
    const key = typeof config.key === 'string' ? config.key : undefined;
    registerSecret(key);
    const res = await this.#request('POST', '/crawl', {
      ...options,
      retry: 'when-service-says',
      key,
      init: () => ({
        body: encoded.body(),
        duplex: 'half',
        headers: { 'content-type': encoded.contentType, 'content-length': String(encoded.contentLength) },
      }),
    });
    const body = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    const uuid = [body?.crawler_uuid, body?.uuid].find((v) => typeof v === 'string' && v !== '') as string | undefined;
    if (uuid === undefined) throw badResponse('the crawl start answer has no crawler_uuid', res.status);
    return { ...body, uuid, crawler_uuid: uuid };
  }

  /** The crawl's status record (docs/decisions.md D11), both names of each pair present, unknown fields kept. */
  async status(uuid: string, options: CallOptions = {}): Promise<CrawlStatus> {
    const res = await this.#request('GET', `/crawl/${this.#id(uuid)}/status`, { ...options, retry: 'always' });
    const status = readStatus(await res.json().catch(() => undefined));
    if (!status) throw badResponse('the status record names no crawler_uuid', res.status);
    return status;
  }

  /**
   * Poll until the crawl is finished (`is_finished` or `is_complete`). A crawl that ends
   * failed or cancelled throws a {@link CrawlerError} naming it; a `timeout` throws a
   * {@link TimeoutError} and leaves the crawl running.
   */
  async wait(uuid: string, options: WaitOptions = {}): Promise<CrawlStatus> {
    refuse(
      'wait options',
      numberIssues({
        pollInterval: [options.pollInterval, { min: 1, max: 3_600_000, unit: 'milliseconds' }],
        timeout: [options.timeout, { min: 0, unit: 'milliseconds' }],
      }),
    );
    const started = this.#http.clock.now();
    const interval = options.pollInterval ?? CRAWLER_CLIENT_DEFAULTS.pollInterval;
    for (;;) {
      const status = await this.status(uuid, options);
      options.onProgress?.(status);
      if (status.is_finished) return this.#ended(uuid, status);
      // The last poll is at the deadline itself, so a crawl that completes just in time counts.
      const left = options.timeout === undefined ? interval : options.timeout - (this.#http.clock.now() - started);
      if (left <= 0) {
        throw new TimeoutError(`the crawl ${uuid} did not complete within ${options.timeout} ms; it is still running`, {
          uuid,
        });
      }
      await this.#http.clock.sleep(Math.min(interval, left), options.signal);
    }
  }

  #ended(uuid: string, status: CrawlStatus): CrawlStatus {
    const cancelled = status.status === 'CANCELLED';
    if (!cancelled && status.is_success !== false) return status;
    const reason = status.state.stop_reason ?? status.status;
    throw new CrawlerError({
      message: `the crawl ${uuid} ended ${cancelled ? 'cancelled' : 'unsuccessfully'} (${reason})`,
      code: cancelled ? 'ERR::CRAWLER::CANCELLED' : 'ERR::CRAWLER::FAILED',
      http_status_code: 200,
      is_retryable: false,
      resource: 'CRAWLER',
      uuid,
    });
  }

  /**
   * Every URL the crawl met with that status (docs/decisions.md D10, `visited` by default), read a page of the
   * text listing at a time as you iterate, until an empty page.
   */
  urls(
    uuid: string,
    options: CallOptions & { status?: CrawlUrlStatus; perPage?: number } = {},
  ): AsyncIterable<CrawlUrl> {
    const issues = numberIssues({ perPage: [options.perPage, { min: 1, max: 1000, unit: 'URLs' }] });
    if (options.status !== undefined && !URL_STATUSES.includes(options.status)) {
      issues.push({
        option: 'status',
        message: `\`status\` must be ${URL_STATUSES.join(', ')} (got ${show(options.status)})`,
      });
    }
    refuse('urls options', issues);
    return this.#urlPages(this.#id(uuid), options.status ?? 'visited', options.perPage, options);
  }

  async *#urlPages(uuid: string, status: CrawlUrlStatus, perPage: number | undefined, options: CallOptions) {
    let previous: string | undefined;
    for (let page = 1; ; page++) {
      const res = await this.#request('GET', `/crawl/${uuid}/urls`, {
        ...options,
        retry: 'always',
        headers: { accept: 'text/plain, application/json' },
        query: { status, page: String(page), per_page: String(perPage ?? CRAWLER_CLIENT_DEFAULTS.perPage) },
      });
      if ((res.headers.get('content-type') ?? '').includes('application/json')) {
        throw badResponse('the URL listing answered JSON where the service sends text, a URL a line', res.status);
      }
      const text = await res.text();
      const lines = readUrlLines(text, status);
      if (lines.length === 0) return;
      // A service that ignores `page` would give the same page forever.
      if (text === previous)
        throw badResponse(`the service gave page ${page} of the URLs as page ${page - 1}`, res.status);
      previous = text;
      yield* lines;
    }
  }

  /**
   * Every page's contents in the given formats (docs/decisions.md D10), read a page of the listing at a time as
   * you iterate, following `links.next`. `limit` is the page size, 1 to 50.
   */
  contents(
    uuid: string,
    options: CallOptions & { formats?: readonly ContentFormat[]; limit?: number; url?: string } = {},
  ): AsyncIterable<CrawlContent> {
    refuse('contents options', [
      ...formatIssues(options.formats),
      ...numberIssues({ limit: [options.limit, { min: 1, max: 50, unit: 'pages' }] }),
    ]);
    return this.#contentPages(this.#id(uuid), options);
  }

  async *#contentPages(
    uuid: string,
    options: CallOptions & { formats?: readonly ContentFormat[]; limit?: number; url?: string },
  ): AsyncGenerator<CrawlContent> {
    const path = `/crawl/${uuid}/contents`;
    let query: Record<string, string | undefined> = {
      formats: options.formats?.join(','),
      limit: options.limit === undefined ? undefined : String(options.limit),
      url: options.url,
    };
    const asked = new Set<string>();
    for (;;) {
      const res = await this.#request('GET', path, { ...options, retry: 'always', query });
      const body = (await res.json().catch(() => undefined)) as
        | { contents?: unknown; links?: { next?: unknown } }
        | undefined;
      const contents = body?.contents;
      if (typeof contents !== 'object' || contents === null || Array.isArray(contents)) {
        throw badResponse('the contents answer has no `contents` map', res.status);
      }
      for (const [url, content] of Object.entries(contents as Record<string, CrawlContent['content']>)) {
        yield { url, content: content ?? {} };
      }
      const next = body?.links?.next;
      if (typeof next !== 'string' || next === '') return;
      // Only the next page's query is taken: the key never goes to an address the service names.
      const nextQuery = Object.fromEntries(new URL(next, `${this.baseUrl}/`).searchParams);
      delete nextQuery.key;
      const fingerprint = JSON.stringify(nextQuery);
      if (asked.has(fingerprint)) throw badResponse(`the service named the same next page twice (${next})`, res.status);
      asked.add(fingerprint);
      query = nextQuery;
    }
  }

  /**
   * One page's content in one format, as the service stores it (plain mode, docs/decisions.md D10); `null` when
   * that URL was not crawled or that format not kept (404).
   */
  async read(uuid: string, url: string, options: CallOptions & { format: ContentFormat }): Promise<string | null> {
    const issues = formatIssues([options?.format], 'format');
    if (typeof url !== 'string' || url === '') issues.push({ option: 'url', message: '`url` must be a crawled URL' });
    refuse('read options', issues);
    try {
      const res = await this.#request('GET', `/crawl/${this.#id(uuid)}/contents`, {
        ...options,
        retry: 'always',
        headers: { accept: '*/*' },
        query: { plain: 'true', url, formats: options.format },
      });
      return await res.text();
    } catch (error) {
      // A crawl that does not exist is an error; a page it did not keep is not.
      if (isServiceError(error) && error.http_status_code === 404 && error.code !== 'ERR::CRAWLER::NOT_FOUND')
        return null;
      throw error;
    }
  }

  /**
   * The contents of up to 100 URLs in one call (`POST .../contents/batch`, docs/decisions.md D10): `{ [url]:
   * { [format]: text } }`; a URL or format the crawl did not keep is absent. The
   * `multipart/related` answer is read with meros.
   */
  async contentsBatch(
    uuid: string,
    urls: readonly string[],
    options: CallOptions & { formats: readonly ContentFormat[] },
  ): Promise<Record<string, Partial<Record<ContentFormat, string>>>> {
    const issues = formatIssues(options?.formats, 'formats', true);
    if (!Array.isArray(urls) || urls.length < 1 || urls.length > 100) {
      issues.push({
        option: 'urls',
        message: `\`urls\` must list 1 to 100 URLs (got ${Array.isArray(urls) ? urls.length : show(urls)}): split a longer list`,
      });
    } else if (urls.some((u) => typeof u !== 'string' || u === '' || /[\r\n]/.test(u))) {
      issues.push({ option: 'urls', message: '`urls` entries must be URLs, each on one line' });
    }
    refuse('contentsBatch options', issues);
    const out: Record<string, Partial<Record<ContentFormat, string>>> = {};
    for (const formats of byContentType(options.formats)) {
      const res = await this.#request('POST', `/crawl/${this.#id(uuid)}/contents/batch`, {
        ...options,
        retry: 'always',
        query: { formats: formats.join(',') },
        headers: { accept: 'multipart/related, application/json', 'content-type': 'text/plain' },
        init: () => ({ body: urls.join('\n') }),
      });
      const parts = await meros<string>(res);
      if (parts instanceof Response) throw badResponse('the batch answer is not multipart/related', res.status);
      for await (const part of parts) {
        const url = part.headers['content-location'];
        const type = (part.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
        const format = formats.find((f) => FORMAT_TYPES[f] === type) ?? (formats.length === 1 ? formats[0] : undefined);
        if (!url || !format) continue;
        out[url] = { ...out[url], [format]: typeof part.body === 'string' ? part.body : JSON.stringify(part.body) };
      }
    }
    return out;
  }

  /** The crawl's artifact as a stream (`warc`, gzip WARC records; `har`, JSON): never a whole buffer. */
  async artifact(
    uuid: string,
    options: CallOptions & { type: 'warc' | 'har' },
  ): Promise<{ stream: ReadableStream<Uint8Array>; contentType: string | null; contentLength: number | null }> {
    if (options?.type !== 'warc' && options?.type !== 'har') {
      throw new ConfigError('artifact options', [{ option: 'type', message: '`type` must be warc or har' }]);
    }
    const res = await this.#request('GET', `/crawl/${this.#id(uuid)}/artifact`, {
      ...options,
      retry: 'always',
      headers: { accept: options.type === 'har' ? 'application/json' : 'application/gzip, application/octet-stream' },
      query: { type: options.type },
      streaming: true,
    });
    const length = res.headers.get('content-length');
    return {
      stream: res.body ?? new ReadableStream({ start: (c) => c.close() }),
      contentType: res.headers.get('content-type'),
      contentLength: length === null ? null : Number(length),
    };
  }

  /**
   * Search the index of one or more crawls (docs/decisions.md D10). Crawls without an index, or not ready yet,
   * are listed in `skipped`; the search still answers.
   */
  async search(params: SearchParams, options: CallOptions = {}): Promise<SearchResponse> {
    const issues = this.#crawlIssues(params?.crawls, 'query', params?.query);
    issues.push(...this.#searchIssues(params ?? {}, ''));
    refuse('search parameters', issues);
    const res = await this.#request('POST', '/crawl/search', {
      ...options,
      retry: 'always',
      json: {
        crawl_ids: params.crawls,
        query: params.query,
        ...(params.limit === undefined ? {} : { limit: params.limit }),
        ...(params.mode === undefined ? {} : { mode: params.mode }),
        ...(params.filters === undefined ? {} : { filters: params.filters }),
        ...(params.cursor === undefined ? {} : { cursor: params.cursor }),
      },
    });
    return readSearch(await res.json().catch(() => undefined), params);
  }

  /**
   * Ask the crawls' index; the answer streams as tokens (docs/decisions.md D12). An error before the first token
   * rejects; an error frame after tokens ends the iteration by throwing, after the tokens
   * already given. Leaving the loop early aborts the request. Never asked twice once the
   * service answered (a prompt is billable).
   */
  prompt(params: PromptParams, options: CallOptions = {}): PromptStream {
    const issues = this.#crawlIssues(params?.crawls, 'prompt', params?.prompt);
    if (params?.search !== undefined) issues.push(...this.#searchIssues(params.search, 'search.'));
    if (params?.model !== undefined && (typeof params.model !== 'string' || params.model === ''))
      issues.push({ option: 'model', message: '`model` must be a model name' });
    refuse('prompt parameters', issues);
    const json = {
      crawl_ids: params.crawls,
      prompt: params.prompt,
      generation: { stream: true, ...(params.model === undefined ? {} : { model: params.model }) },
      ...(params.search === undefined ? {} : { search: params.search }),
    };
    return new PromptStream(
      (signal) =>
        this.#request('POST', '/crawl/prompt', {
          signal,
          retry: 'when-service-says',
          json,
          headers: { accept: 'text/event-stream' },
          streaming: true,
        }),
      options.signal,
    );
  }

  /**
   * Refresh a crawl now (`POST /crawl/{uuid}/refresh`); answers its refresh block. `REFRESH_*`
   * errors are {@link CrawlerError}s. Retried only when the service says (a refresh is billable).
   */
  async refresh(uuid: string, options: CallOptions = {}): Promise<CrawlRefreshState> {
    const res = await this.#request('POST', `/crawl/${this.#id(uuid)}/refresh`, {
      ...options,
      retry: 'when-service-says',
    });
    return readRefreshState(await res.json().catch(() => ({})));
  }

  /**
   * Change a crawl's refresh schedule (`PATCH /crawl/{uuid}/refresh`): only the fields given
   * change. The interval follows the configuration's rules (3600 to 7776000 seconds).
   */
  async updateRefresh(uuid: string, settings: RefreshSettings, options: CallOptions = {}): Promise<CrawlRefreshState> {
    const [min, max] = REFRESH_INTERVAL_RANGE;
    const issues = numberIssues({ refresh_interval: [settings?.refresh_interval, { min, max, unit: 'seconds' }] });
    if (settings?.refresh !== undefined && typeof settings.refresh !== 'boolean')
      issues.push({ option: 'refresh', message: `\`refresh\` must be true or false (got ${show(settings.refresh)})` });
    if (settings?.refresh === undefined && settings?.refresh_interval === undefined)
      issues.push({
        option: 'refresh',
        message: 'give `refresh`, `refresh_interval` or both: there is nothing to change',
      });
    if (settings?.refresh === false && settings.refresh_interval !== undefined)
      issues.push({
        option: 'refresh_interval',
        message: '`refresh_interval` needs refresh on: leave it out when turning refresh off',
      });
    refuse('refresh settings', issues);
    const res = await this.#request('PATCH', `/crawl/${this.#id(uuid)}/refresh`, {
      ...options,
      retry: 'always',
      json: {
        ...(settings.refresh === undefined ? {} : { refresh: settings.refresh }),
        ...(settings.refresh_interval === undefined ? {} : { refresh_interval: settings.refresh_interval }),
      },
    });
    return readRefreshState(await res.json().catch(() => ({})));
  }

  /** Cancel a running crawl; cancelling a finished one succeeds too. */
  async cancel(uuid: string, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const res = await this.#request('POST', `/crawl/${this.#id(uuid)}/cancel`, { ...options, retry: 'always' });
    return (await res.json().catch(() => ({}))) as Record<string, unknown>;
  }

  #id(uuid: string): string {
    if (typeof uuid !== 'string' || !/^[A-Za-z0-9._~-]{1,200}$/.test(uuid)) {
      throw new ConfigError('crawl id', [{ option: 'uuid', message: '`uuid` must be the id `start` returned' }]);
    }
    return uuid;
  }

  #crawlIssues(crawls: readonly string[] | undefined, name: string, text: unknown): ConfigIssue[] {
    const issues: ConfigIssue[] = [];
    if (!Array.isArray(crawls) || crawls.length === 0 || crawls.some((c) => typeof c !== 'string' || c === '')) {
      issues.push({ option: 'crawls', message: '`crawls` must list one or more crawl ids' });
    } else if (new Set(crawls).size !== crawls.length) {
      issues.push({ option: 'crawls', message: '`crawls` must not name a crawl twice' });
    }
    if (typeof text !== 'string' || text.trim() === '')
      issues.push({ option: name, message: `\`${name}\` must be a non-empty string` });
    return issues;
  }

  #searchIssues(params: { limit?: unknown; mode?: unknown; filters?: unknown }, prefix: string): ConfigIssue[] {
    const issues = numberIssues({ [`${prefix}limit`]: [params.limit, { min: 1, max: 50, unit: 'results' }] });
    if (params.mode !== undefined && !SEARCH_MODES.includes(params.mode as SearchMode)) {
      issues.push({
        option: `${prefix}mode`,
        message: `\`${prefix}mode\` must be ${SEARCH_MODES.join(', ')} (got ${show(params.mode)})`,
      });
    }
    if (
      params.filters !== undefined &&
      (typeof params.filters !== 'object' || params.filters === null || Array.isArray(params.filters))
    ) {
      issues.push({
        option: `${prefix}filters`,
        message: `\`${prefix}filters\` must be an object such as { url_prefix, host }`,
      });
    }
    return issues;
  }
}
