import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CRAWLER_EVENTS, type CrawlConfig, toCrawlRequest } from '../../packages/cloud-browser/src/crawler/index.js';
import { scanUrlList, URL_LINE } from '../../packages/cloud-browser/src/crawler/schema.js';
import { isConfigError } from '../../packages/cloud-browser/src/index.js';

function issues(config: unknown) {
  try {
    toCrawlRequest(config as CrawlConfig);
  } catch (e) {
    if (isConfigError(e)) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

const url = 'https://site.test/';

describe('toCrawlRequest applies the seven rules of spec 2.1', () => {
  it.each<[string, Record<string, unknown>, string, string]>([
    [
      'rule 1: both path filters',
      { url, exclude_paths: ['/a'], include_only_paths: ['/b'] },
      'include_only_paths',
      'cannot both be set',
    ],
    ['rule 2: no source', { page_limit: 5 }, 'url', 'exactly one source'],
    [
      'rule 2: two sources',
      { url, remote_url_list: 'https://site.test/list.txt' },
      'url',
      'not `url` and `remote_url_list`',
    ],
    ['rule 2: three sources', { url, url_list: [url], remote_url_list: url }, 'url', 'exactly one source'],
    [
      'rule 3: an interval of one minute',
      { url, refresh: true, refresh_interval: 60 },
      'refresh_interval',
      're-scrapes the whole site',
    ],
    [
      'rule 3: an interval over 90 days',
      { url, refresh: true, refresh_interval: 7_776_001 },
      'refresh_interval',
      'between 3600 and 7776000',
    ],
    ['rule 4: an interval without refresh', { url, refresh_interval: 7200 }, 'refresh', 'needs `refresh: true`'],
    [
      'rule 4: an interval with refresh false',
      { url, refresh: false, refresh_interval: 7200 },
      'refresh',
      'needs `refresh: true`',
    ],
    [
      'rule 5: an unknown webhook event',
      { url, webhook_events: ['crawler_started', 'crawler_exploded'] },
      'webhook_events.1',
      'crawler_finished',
    ],
    ['an unknown content format', { url, content_formats: ['pdf'] }, 'content_formats.0', 'clean_html'],
    ['a url that is not http', { url: 'ftp://site.test/' }, 'url', 'http or https'],
    ['a url_list entry with a line break', { url_list: ['https://a.test/\nhttps://b.test/'] }, 'url_list', 'entry 0'],
    ['an empty url_list', { url_list: [] }, 'url_list', 'at least one URL'],
    ['a negative page_limit', { url, page_limit: -1 }, 'page_limit', 'at least 0'],
    ['a max_duration under 15 s', { url, max_duration: 5 }, 'max_duration', 'at least 15'],
    ['a max_duration over 3 hours', { url, max_duration: 10_801 }, 'max_duration', 'at most 10800 seconds'],
    ['a delay over 15 s', { url, delay: 15_001 }, 'delay', 'at most 15000 milliseconds'],
    ['a rendering_delay over 25 s', { url, rendering_delay: 25_001 }, 'rendering_delay', 'at most 25000'],
    ['a cache_ttl over a week', { url, cache_ttl: 604_801 }, 'cache_ttl', 'at most 604800'],
    [
      '101 exclude_paths',
      { url, exclude_paths: Array.from({ length: 101 }, (_, i) => `/x${i}`) },
      'exclude_paths',
      'at most 100',
    ],
    ['a fractional delay', { url, delay: 1.5 }, 'delay', 'whole number'],
    ['headers that are not strings', { url, headers: { 'x-a': 1 } }, 'headers.x-a', 'strings'],
    ['a misspelt option', { url, page_limt: 5 }, 'page_limt', 'did you mean `page_limit`'],
  ])('refuses %s', (_name, config, option, text) => {
    const error = issues(config);
    const issue = error.issues.find((i) => i.option === option);
    expect(issue, JSON.stringify(error.issues)).toBeDefined();
    expect(issue?.message).toContain(text);
  });

  it('lists the eleven allowed events when one is wrong', () => {
    const message = issues({ url, webhook_events: ['nope'] }).message;
    for (const e of CRAWLER_EVENTS) expect(message).toContain(e);
  });

  it('accepts 0 for page_limit and max_api_credit, which the service reads as no limit', () => {
    expect(toCrawlRequest({ url, page_limit: 0, max_api_credit: 0 }).config).toMatchObject({
      page_limit: 0,
      max_api_credit: 0,
    });
  });

  it('accepts the interval bounds with refresh', () => {
    expect(toCrawlRequest({ url, refresh: true, refresh_interval: 3600 }).config.refresh_interval).toBe(3600);
    expect(toCrawlRequest({ url, refresh: true, refresh_interval: 7_776_000 }).config.refresh_interval).toBe(7_776_000);
  });

  it('rule 6: leaves out false booleans and empty options', () => {
    const { config } = toCrawlRequest({
      url,
      cache: false,
      search: false,
      exclude_paths: [],
      headers: {},
      content_formats: ['markdown'],
      use_sitemaps: true,
    });
    expect(config).toEqual({ url, content_formats: ['markdown'], use_sitemaps: true });
  });

  it.each([
    ['respect_robots_txt', false],
    ['respect_robots_txt', true],
    ['follow_internal_subdomains', false],
    ['follow_internal_subdomains', true],
  ])('rule 6: sends %s exactly when set (%s)', (name, value) => {
    expect(toCrawlRequest({ url, [name]: value }).config).toEqual({ url, [name]: value });
    expect(toCrawlRequest({ url }).config).not.toHaveProperty(name);
  });

  it.each<[string, Record<string, unknown>, boolean]>([
    ['asp true', { asp: true }, true],
    ['unblocker true', { unblocker: true }, true],
    ['both true', { asp: true, unblocker: true }, true],
    ['asp false, unblocker true: asp wins', { asp: false, unblocker: true }, false],
    ['asp true, unblocker false: asp wins', { asp: true, unblocker: false }, true],
    ['asp false', { asp: false }, false],
    ['unblocker false', { unblocker: false }, false],
    ['neither', {}, false],
  ])('rule 7: %s', (_name, extra, sent) => {
    const { config } = toCrawlRequest({ url, ...extra });
    expect('asp' in config).toBe(sent);
    if (sent) expect(config.asp).toBe(true);
    expect(config).not.toHaveProperty('unblocker');
  });

  it('never puts url_list or key in the config', () => {
    const { config, urls } = toCrawlRequest({
      url_list: ['https://a.test/', 'https://b.test/'],
      key: 'secret-key-1234',
    });
    expect(config).toEqual({});
    expect(urls).toEqual(['https://a.test/', 'https://b.test/']);
  });

  it('reports every problem at once', () => {
    const error = issues({ page_limit: -1, refresh_interval: 5, exclude_paths: ['/a'], include_only_paths: ['/b'] });
    expect(new Set(error.issues.map((i) => i.option))).toEqual(
      new Set(['page_limit', 'url', 'refresh_interval', 'refresh', 'include_only_paths']),
    );
  });
});

describe('url_list entries', () => {
  // 20,000 entries put the odd one in the second batch of the check.
  const around = (odd: unknown, at = 17_000) =>
    Array.from({ length: 20_000 }, (_, i) => (i === at ? odd : `https://shop.test/item-${i}?ref=x`));

  it.each<[string, unknown]>([
    ['no host', 'https://'],
    ['a path where the host goes', 'https:///path'],
    ['a query where the host goes', 'http://?q=1'],
    ['a fragment where the host goes', 'https://#top'],
    ['a space', 'https://a.test/x y'],
    ['a tab', 'https://a.test/\tx'],
    ['a carriage return', 'https://a.test/x\r'],
    ['a trailing line break', 'https://a.test/x\n'],
    ['a second URL after a line break', 'https://a.test/\nhttps://b.test/'],
    ['a line break then text', 'https://a.test/\nfoo'],
    ['a no-break space', 'https://a.test/x\u00a0y'],
    ['a line separator', 'https://a.test/\u2028https://b.test/'],
    ['an ideographic space', 'https://a.test/\u3000'],
    ['an empty string', ''],
    ['another scheme', 'ftp://a.test/'],
    ['one slash', 'https:/a.test/'],
    ['a number', 42],
    ['null', null],
  ])('refuses %s and names the entry', (_name, odd) => {
    const error = issues({ url_list: around(odd) });
    const issue = error.issues.find((i) => i.option === 'url_list');
    expect(issue?.message).toContain('entry 17000 (');
    expect(issue?.message).not.toContain('entry 16999');
  });

  it.each([
    ['upper-case schemes', 'HTTPS://A.TEST/X'],
    ['plain http and a bare host', 'http://a'],
    ['characters beyond ASCII', 'https://bücher.test/é?q=ü'],
    ['a user and a port', 'https://u:p@a.test:8443/'],
  ])('accepts %s and sends each entry on its own line, UTF-8', async (_name, odd) => {
    const list = around(odd) as string[];
    const { urls } = toCrawlRequest({ url_list: list });
    expect(urls).toBe(list);
    const scan = scanUrlList(list);
    expect(Buffer.concat(scan.chunks).toString('utf8')).toBe(`${list.join('\n')}\n`);
    expect(scan.bytes).toBe(Buffer.byteLength(`${list.join('\n')}\n`));
  });

  it('accepts a list exactly when every entry matches URL_LINE, and sends it unchanged (property)', () => {
    const piece = fc.constantFrom(
      'http',
      'https',
      'HTTPS',
      '://',
      ':/',
      '/',
      '?',
      '#',
      'a',
      'b.test',
      ' ',
      '\t',
      '\n',
      '\r',
      '\u00a0',
      'é',
      '\u2028',
      '\0',
      '',
    );
    const entry = fc.oneof(
      fc.array(piece, { maxLength: 6 }).map((p) => p.join('')),
      fc
        .tuple(fc.constantFrom('http://', 'https://'), fc.array(piece, { maxLength: 4 }))
        .map(([s, p]) => s + p.join('')),
    );
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 8 }), (list) => {
        const scan = scanUrlList(list);
        const valid = list.every((u) => URL_LINE.test(u));
        expect(scan.problems.length === 0).toBe(valid);
        if (valid) expect(Buffer.concat(scan.chunks).toString('utf8')).toBe(`${list.join('\n')}\n`);
      }),
      { numRuns: 3000 },
    );
  });
});
