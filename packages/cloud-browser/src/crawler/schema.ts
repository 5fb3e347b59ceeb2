/**
 * The crawl configuration (docs/wire.md §2.1, rules 1-7; docs/decisions.md D8, docs/decisions.md D18): one zod schema for the client and
 * the emulator, and `toCrawlRequest`, which applies every rule and gives the wire form.
 * Pure: no I/O.
 */
import { z } from 'zod';
import { ConfigError, type ConfigIssue } from '../errors.js';
import { show, toConfigIssues } from '../internal/issues.js';
import type { Agree, Assert, Schema } from '../internal/schema.js';
import { CRAWLER_EVENTS, type CrawlerEvent } from '../webhooks/constants.js';

/** Content formats of docs/wire.md §2.1. */
export const CONTENT_FORMATS = ['html', 'markdown', 'text', 'clean_html'] as const;
/** One of {@link CONTENT_FORMATS}. */
export type ContentFormat = (typeof CONTENT_FORMATS)[number];
/** Smallest and largest `refresh_interval`, seconds (docs/wire.md §10). */
export const REFRESH_INTERVAL_RANGE = [3600, 7_776_000] as const;

const bool = (name: string) =>
  z.boolean({ error: (i) => `\`${name}\` must be true or false (got ${show(i.input)})` }).optional();
const text = (name: string) =>
  z
    .string({ error: (i) => `\`${name}\` must be a string (got ${show(i.input)})` })
    .min(1, { error: `\`${name}\` must not be empty: leave it out instead` });
// Bounds where the service's SDKs show them (npm scrapfly-sdk `crawlerconfig.ts`).
const int = (name: string, unit: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .number({ error: (i) => `\`${name}\` must be a whole number of ${unit} (got ${show(i.input)})` })
    .int({ error: (i) => `\`${name}\` must be a whole number of ${unit} (got ${show(i.input)})` })
    .min(min, { error: (i) => `\`${name}\` must be at least ${min} (got ${show(i.input)})` })
    .max(max, { error: (i) => `\`${name}\` must be at most ${max} ${unit} (got ${show(i.input)})` })
    .optional();
const httpUrl = (name: string) =>
  text(name).refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), {
    error: (i) => `\`${name}\` must be an http or https URL (got ${show(i.input)})`,
  });
const entry = (name: string) =>
  z.string({ error: `\`${name}\` entries must be strings` }).min(1, { error: `\`${name}\` entries must not be empty` });
const strings = (name: string, max: number) =>
  z
    .array(entry(name), { error: (i) => `\`${name}\` must be a list of strings (got ${show(i.input)})` })
    .max(max, { error: `\`${name}\` takes at most ${max} entries` })
    .readonly()
    .optional();

// An absolute http(s) URL on one line: what the `urls` part can carry.
export const URL_LINE = /^https?:\/\/[^\s/?#]+[^\s]*$/i;
/** URLs checked, joined and measured per batch. */
export const URL_BATCH = 16384;

/** A scanned URL list: its problems, the byte length of its `urls` part, and that part's bytes by batch. */
export interface ScannedUrlList {
  problems: string[];
  bytes: number;
  /** Each batch's URLs, one a line, UTF-8: the `urls` part as it is sent. */
  chunks: Uint8Array[];
}

const scanned = new WeakMap<readonly unknown[], ScannedUrlList>();
const encoder = new TextEncoder();

/** True when every item from `start` to `end` is a string. */
function allStrings(list: readonly unknown[], start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (typeof list[i] !== 'string') return false;
  return true;
}

/**
 * True when the entries from `start` to `end`, laid out in `bytes` one after the other with
 * one byte between them, each start `http://` or `https://` and a host character (not white
 * space, `/`, `?` nor `#`). Lines are placed by the entries' lengths, not searched for, and
 * each separator byte becomes the line break as it is passed: no regex, no native call per line.
 */
function linesStartRight(list: readonly unknown[], start: number, end: number, bytes: Uint8Array): boolean {
  let s = 0;
  for (let i = start; i < end; i++) {
    // A separator or the final line break is below 33, so a short entry fails here, not past its end.
    if (bytes[s] !== 104 || bytes[s + 1] !== 116 || bytes[s + 2] !== 116 || bytes[s + 3] !== 112) return false; // http
    const p = bytes[s + 4] === 115 ? s + 5 : s + 4; // s?
    if (bytes[p] !== 58 || bytes[p + 1] !== 47 || bytes[p + 2] !== 47) return false; // ://
    const host = bytes[p + 3] as number;
    if (!(host > 32) || host === 47 || host === 63 || host === 35) return false;
    s += (list[i] as string).length;
    bytes[s++] = 10;
  }
  return true;
}

/** White space a URL line must not hold, in an ASCII text. */
const hasAsciiSpace = (text: string) =>
  text.indexOf(' ') !== -1 ||
  text.indexOf('\n') !== -1 ||
  text.indexOf('\t') !== -1 ||
  text.indexOf('\r') !== -1 ||
  text.indexOf('\f') !== -1 ||
  text.indexOf('\v') !== -1;

/** The `urls` part of one batch when every entry is ASCII and passes the quick check; else undefined. */
function quickBatch(list: readonly unknown[], start: number, end: number): Uint8Array | undefined {
  if (!allStrings(list, start, end)) return undefined;
  // Joined with NUL, which is not white space: a line break found in the text is in an entry.
  const text = (list.slice(start, end) as string[]).join('\0');
  // A byte length equal to the length means ASCII only, so no Unicode white space to look for
  // and a character's index is its byte's.
  if (Buffer.byteLength(text, 'utf8') !== text.length || hasAsciiSpace(text)) return undefined;
  const bytes = Buffer.allocUnsafeSlow(text.length + 1);
  bytes.write(text, 0, 'latin1');
  bytes[text.length] = 10;
  return linesStartRight(list, start, end, bytes) ? bytes : undefined;
}

/**
 * Check a URL list and measure the `urls` part it makes, a batch at a time. The quick check
 * accepts exactly what {@link URL_LINE} accepts line by line, over one joined text per batch; a
 * batch it does not accept (anything beyond ASCII, an upper-case scheme, a wrong entry) is checked
 * entry by entry with the regex, which also names the wrong entries. Each batch's bytes are kept,
 * encoded, to be sent. Cached per list.
 */
export function scanUrlList(list: readonly unknown[]): ScannedUrlList {
  const cached = scanned.get(list);
  if (cached) return cached;
  const result: ScannedUrlList = { problems: [], bytes: 0, chunks: [] };
  for (let start = 0; start < list.length; start += URL_BATCH) {
    const end = Math.min(list.length, start + URL_BATCH);
    // Kept encoded, off the JavaScript heap, rather than as text: less for the collector to walk.
    let chunk = quickBatch(list, start, end);
    if (!chunk) {
      for (let i = start; i < end && result.problems.length < 3; i++) {
        const u = list[i];
        if (typeof u !== 'string' || !URL_LINE.test(u)) result.problems.push(`entry ${i} (${show(u)})`);
      }
      if (result.problems.length > 0) break;
      chunk = encoder.encode(`${(list.slice(start, end) as string[]).join('\n')}\n`);
    }
    result.chunks.push(chunk);
    result.bytes += chunk.length;
  }
  if (result.problems.length > 0) result.chunks = [];
  scanned.set(list, result);
  return result;
}

const fields = {
  url: httpUrl('url').optional(),
  // Checked a batch at a time rather than with a schema per entry: lists of a million URLs are common.
  url_list: z
    .custom<readonly string[]>((v) => Array.isArray(v), {
      error: (i) => `\`url_list\` must be a list of URLs (got ${show(i.input)})`,
    })
    .superRefine((list, ctx) => {
      const { problems } = scanUrlList(list);
      if (problems.length > 0) {
        ctx.addIssue({
          code: 'custom',
          message: `\`url_list\` entries must be http or https URLs with a host, one a line, without white space: ${problems.join(', ')}`,
        });
      }
    })
    .optional(),
  remote_url_list: httpUrl('remote_url_list').optional(),
  /** 0 means no limit. */
  page_limit: int('page_limit', 'pages', 0),
  max_depth: int('max_depth', 'levels', 0),
  max_duration: int('max_duration', 'seconds', 15, 10_800),
  exclude_paths: strings('exclude_paths', 100),
  include_only_paths: strings('include_only_paths', 100),
  ignore_base_path_restriction: bool('ignore_base_path_restriction'),
  follow_external_links: bool('follow_external_links'),
  allowed_external_domains: strings('allowed_external_domains', 250),
  follow_internal_subdomains: bool('follow_internal_subdomains'),
  allowed_internal_subdomains: strings('allowed_internal_subdomains', 250),
  headers: z
    .record(z.string(), z.string({ error: '`headers` values must be strings' }), {
      error: (i) => `\`headers\` must be an object of strings (got ${show(i.input)})`,
    })
    .optional(),
  delay: int('delay', 'milliseconds', 0, 15_000),
  user_agent: text('user_agent').optional(),
  max_concurrency: int('max_concurrency', 'requests', 1),
  rendering_delay: int('rendering_delay', 'milliseconds', 0, 25_000),
  use_sitemaps: bool('use_sitemaps'),
  respect_robots_txt: bool('respect_robots_txt'),
  ignore_no_follow: bool('ignore_no_follow'),
  cache: bool('cache'),
  cache_ttl: int('cache_ttl', 'seconds', 0, 604_800),
  cache_clear: bool('cache_clear'),
  content_formats: z
    .array(
      z.enum(CONTENT_FORMATS, {
        error: (i) => `\`content_formats\` entries must be ${CONTENT_FORMATS.join(', ')} (got ${show(i.input)})`,
      }),
      { error: (i) => `\`content_formats\` must be a list (got ${show(i.input)})` },
    )
    .readonly()
    .optional(),
  extraction_rules: z
    .record(z.string(), z.unknown(), { error: (i) => `\`extraction_rules\` must be an object (got ${show(i.input)})` })
    .optional(),
  asp: bool('asp'),
  unblocker: bool('unblocker'),
  proxy_pool: text('proxy_pool').optional(),
  country: text('country').optional(),
  webhook_name: text('webhook_name').optional(),
  webhook_events: z
    .array(
      z.enum(CRAWLER_EVENTS, {
        error: (i) => `\`webhook_events\` entries must be among ${CRAWLER_EVENTS.join(', ')} (got ${show(i.input)})`,
      }),
      { error: (i) => `\`webhook_events\` must be a list (got ${show(i.input)})` },
    )
    .readonly()
    .optional(),
  /** 0 means no limit. */
  max_api_credit: int('max_api_credit', 'credits', 0),
  search: bool('search'),
  refresh: bool('refresh'),
  refresh_interval: z
    .number({ error: (i) => `\`refresh_interval\` must be a whole number of seconds (got ${show(i.input)})` })
    .int({ error: (i) => `\`refresh_interval\` must be a whole number of seconds (got ${show(i.input)})` })
    .optional(),
  key: text('key').optional(),
};

type Raw = Record<string, unknown>;
const given = (raw: Raw, k: string) => raw[k] !== undefined && raw[k] !== null;
const nonEmpty = (raw: Raw, k: string) => Array.isArray(raw[k]) && (raw[k] as unknown[]).length > 0;

/** Rules 1-4 across options, checked even when some option has the wrong type. */
function rules(raw: Raw, ctx: { addIssue: (i: { code: 'custom'; message: string; path: string[] }) => void }) {
  const add = (path: string, message: string) => ctx.addIssue({ code: 'custom', message, path: [path] });
  if (nonEmpty(raw, 'exclude_paths') && nonEmpty(raw, 'include_only_paths')) {
    add('include_only_paths', '`exclude_paths` and `include_only_paths` cannot both be set: keep one');
  }
  const sources = ['url', 'url_list', 'remote_url_list'].filter((k) => given(raw, k));
  if (sources.length !== 1) {
    add(
      'url',
      sources.length === 0
        ? 'a crawl needs exactly one source: `url`, `url_list` or `remote_url_list`'
        : `a crawl takes exactly one source, not ${sources.map((s) => `\`${s}\``).join(' and ')}: keep one`,
    );
  }
  if (Array.isArray(raw.url_list) && raw.url_list.length === 0)
    add('url_list', '`url_list` must hold at least one URL');
  const interval = raw.refresh_interval;
  if (typeof interval === 'number') {
    const [min, max] = REFRESH_INTERVAL_RANGE;
    if (interval < min || interval > max) {
      add(
        'refresh_interval',
        `\`refresh_interval\` must be between ${min} and ${max} seconds (90 days) (got ${interval}): each refresh re-scrapes the whole site`,
      );
    }
    if (raw.refresh !== true)
      add('refresh', '`refresh_interval` needs `refresh: true`: set it, or leave the interval out');
  }
}

const zodSchema = z
  .strictObject(fields, {
    error: (i) => (i.code === 'invalid_type' ? 'the crawl configuration must be an object' : undefined),
  })
  .check(z.superRefine((raw, ctx) => rules(raw as Raw, ctx), { when: () => true }));

/**
 * A crawl configuration as the caller writes it (docs/wire.md §2.1, wire names). Exactly one of `url`,
 * `url_list` and `remote_url_list` is required.
 */
export interface CrawlConfig {
  /** The seed: an http or https URL. */
  url?: string | undefined;
  /** Seeds given as a list (sent as a `urls.txt` part), no crawl of links beyond them. */
  url_list?: readonly string[] | undefined;
  /** An http or https URL of a list of seeds, one a line. */
  remote_url_list?: string | undefined;
  /** Pages at most; 0 means no limit. */
  page_limit?: number | undefined;
  /** Link levels below the seed at most; 0 means no limit. */
  max_depth?: number | undefined;
  /** Seconds the crawl may run, 15 to 10800. */
  max_duration?: number | undefined;
  /** Path patterns not to crawl (at most 100); not with `include_only_paths`. */
  exclude_paths?: readonly string[] | undefined;
  /** The only path patterns to crawl (at most 100); not with `exclude_paths`. */
  include_only_paths?: readonly string[] | undefined;
  ignore_base_path_restriction?: boolean | undefined;
  follow_external_links?: boolean | undefined;
  /** Other hosts whose pages may be crawled (at most 250). */
  allowed_external_domains?: readonly string[] | undefined;
  follow_internal_subdomains?: boolean | undefined;
  /** Subdomains whose pages may be crawled (at most 250). */
  allowed_internal_subdomains?: readonly string[] | undefined;
  /** Request headers sent with every page. */
  headers?: Readonly<Record<string, string>> | undefined;
  /** Milliseconds between requests, 0 to 15000. */
  delay?: number | undefined;
  user_agent?: string | undefined;
  /** Requests at once, at least 1. */
  max_concurrency?: number | undefined;
  /** Milliseconds to wait after a page renders, 0 to 25000. */
  rendering_delay?: number | undefined;
  use_sitemaps?: boolean | undefined;
  respect_robots_txt?: boolean | undefined;
  ignore_no_follow?: boolean | undefined;
  cache?: boolean | undefined;
  /** Seconds a cached page is kept, 0 to 604800. */
  cache_ttl?: number | undefined;
  cache_clear?: boolean | undefined;
  /** What to keep of each page. */
  content_formats?: readonly ContentFormat[] | undefined;
  /** Extraction rules by URL pattern. */
  extraction_rules?: Readonly<Record<string, unknown>> | undefined;
  /** Anti-bot bypass (the older name of `unblocker`). */
  asp?: boolean | undefined;
  /** Anti-bot bypass. */
  unblocker?: boolean | undefined;
  proxy_pool?: string | undefined;
  country?: string | undefined;
  /** The webhook (by its name in the dashboard) that receives the crawl's events. */
  webhook_name?: string | undefined;
  /** The events sent to the webhook. */
  webhook_events?: readonly CrawlerEvent[] | undefined;
  /** Credits at most; 0 means no limit. */
  max_api_credit?: number | undefined;
  /** Build a search index of the pages. */
  search?: boolean | undefined;
  /** Crawl again every `refresh_interval` seconds. */
  refresh?: boolean | undefined;
  /** Seconds between refreshes, 3600 to 7776000; needs `refresh: true`. */
  refresh_interval?: number | undefined;
  /** The API key; never sent in the body (the client sends it as `?key=`). */
  key?: string | undefined;
}

// `CrawlConfig` is what users see; this fails to compile when the schema disagrees.
type _CrawlConfigAgrees = Assert<Agree<CrawlConfig, z.input<typeof zodSchema>>>;

/**
 * Every parameter of the crawl start operation (docs/wire.md §2.1), wire names, plus `unblocker`, the
 * current name of `asp` (docs/decisions.md D18). Unknown names are refused.
 *
 * @example
 * crawlConfigSchema.parse({ url: 'https://example.com', page_limit: 50, content_formats: ['markdown'] })
 */
export const crawlConfigSchema: Schema<CrawlConfig> = zodSchema;

/** The known option names, for suggestions. */
export const CRAWL_OPTION_NAMES = Object.keys(fields);

/** The wire form: the `config` part and, with `url_list`, the URLs of the `urls` part. */
export interface CrawlRequest {
  config: Record<string, unknown>;
  urls?: readonly string[];
}

// Sent only when the caller set them, false included, so that the server default applies otherwise.
const EXPLICIT = new Set(['respect_robots_txt', 'follow_internal_subdomains']);

/**
 * Validate a configuration and give its wire form, applying all seven rules of docs/wire.md §2.1:
 * one source, exclusive path filters, the refresh interval's range and its need of
 * `refresh`, the webhook events, leaving out false and empty options (but sending
 * `respect_robots_txt` and `follow_internal_subdomains` when set), and `asp`/`unblocker`.
 * The config never carries `url_list` nor `key` (docs/decisions.md D8).
 *
 * @example
 * toCrawlRequest({ url_list: ['https://a.example/', 'https://b.example/'], unblocker: true })
 * // { config: { asp: true }, urls: ['https://a.example/', 'https://b.example/'] }
 */
export function toCrawlRequest(input: CrawlConfig): CrawlRequest {
  const parsed = crawlConfigSchema.safeParse(input);
  if (!parsed.success) {
    const issues: ConfigIssue[] = toConfigIssues(parsed.error.issues, CRAWL_OPTION_NAMES);
    throw new ConfigError('crawl configuration', issues);
  }
  const value = parsed.data as Record<string, unknown>;
  const config: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(value)) {
    if (name === 'url_list' || name === 'key' || name === 'asp' || name === 'unblocker') continue;
    if (v === undefined || v === null) continue;
    if (EXPLICIT.has(name)) {
      config[name] = v;
      continue;
    }
    if (v === false || v === '') continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0) continue;
    config[name] = v;
  }
  // Rule 7 (docs/decisions.md D18): either name asks for the bypass; when both are given, `asp` wins; false removes it.
  const bypass = value.asp !== undefined ? value.asp : value.unblocker;
  if (bypass === true) config.asp = true;
  return value.url_list ? { config, urls: value.url_list as readonly string[] } : { config };
}
