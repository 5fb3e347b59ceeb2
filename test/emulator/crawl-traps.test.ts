/**
 * The emulator's crawler on a site of traps (test/support/trap-site.ts): each scenario of the
 * crawler compliance suites asserted by the requests the site got, and by what the crawl records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrawlerClient } from '../../packages/cloud-browser/src/crawler/index.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { all } from '../support/all.js';
import { ENCODED, startTrapSite, type TrapSite } from '../support/trap-site.js';

let emulator: Emulator;
let site: TrapSite;
let client: CrawlerClient;

beforeAll(async () => {
  site = await startTrapSite();
  emulator = await startEmulator();
  client = new CrawlerClient({ key: emulator.apiKey, baseUrl: emulator.apiUrl });
});
afterAll(async () => {
  await emulator.close();
  await site.close();
});

/** Each URL of the crawl with that status, and its reason. */
async function listing(uuid: string, status: 'visited' | 'failed' | 'skipped'): Promise<Map<string, string>> {
  return new Map((await all(client.urls(uuid, { status }))).map((u) => [u.url, u.reason ?? '']));
}

describe('a crawl of a site of traps', () => {
  let uuid: string;
  let visited: Map<string, string>;
  let failed: Map<string, string>;
  let skipped: Map<string, string>;
  let peakRss = 0;
  let baseRss = 0;

  beforeAll(async () => {
    baseRss = process.memoryUsage().rss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 10);
    try {
      ({ uuid } = await client.start({
        url: `${site.origin}/`,
        use_sitemaps: true,
        page_limit: 100,
        max_depth: 5,
        search: true,
        content_formats: ['html', 'markdown', 'text', 'clean_html'],
      }));
      const status = await client.wait(uuid, { pollInterval: 50, timeout: 60_000 });
      expect(status.state.stop_reason).toBe('no_more_urls');
    } finally {
      clearInterval(sampler);
    }
    [visited, failed, skipped] = await Promise.all([
      listing(uuid, 'visited'),
      listing(uuid, 'failed'),
      listing(uuid, 'skipped'),
    ]);
  }, 90_000);

  const u = (path: string) => `${site.origin}${path}`;

  it('honours robots.txt: Disallow, Allow by the longest match, `*` and `$`, the query', () => {
    expect(site.count('/trap/secret')).toBe(0);
    expect(skipped.get(u('/trap/secret'))).toBe('robots_txt');
    expect(site.count('/trap/open')).toBe(1);
    expect(site.count('/file.private')).toBe(1);
    expect(site.hits.get('/file.private')).toBeUndefined();
    expect(site.hits.get('/file.private.html')).toBe(1);
    expect(site.hits.get('/search?q=x')).toBeUndefined();
    expect(site.hits.get('/search?page=1')).toBe(1);
    // robots.txt read once for the whole crawl.
    expect(site.hits.get('/robots.txt')).toBe(1);
  });

  it('follows no link of a page with meta robots nofollow, X-Robots-Tag nofollow, or rel=nofollow', () => {
    for (const page of ['/meta-nofollow', '/x-robots', '/rel-nofollow']) expect(site.hits.get(page)).toBe(1);
    expect(site.count('/meta-nofollow-target')).toBe(0);
    expect(site.count('/x-robots-target')).toBe(0);
    expect(site.count('/rel-nofollow-target')).toBe(0);
  });

  it('keeps a noindex page out of the search index', async () => {
    expect(visited.has(u('/noindex'))).toBe(true);
    const res = await client.search({ crawls: [uuid], query: 'zebra crossing' });
    expect(res.results.map((r) => r.url)).not.toContain(u('/noindex'));
  });

  it('bounds a redirect loop and a redirect chain (ten hops)', () => {
    expect(site.count('/loop-')).toBeLessThanOrEqual(2);
    expect(failed.get(u('/loop-a'))).toBe('redirect_loop');
    expect(site.count('/chain/')).toBe(11);
    expect(failed.get(u('/chain/0'))).toBe('too_many_redirects');
  });

  it('fetches a session-id vortex once, an infinite calendar a few times, a fragment once, URL variants once', () => {
    expect(site.count('/vortex')).toBe(1);
    expect(site.count('/calendar')).toBeGreaterThan(2);
    expect(site.count('/calendar')).toBeLessThan(50);
    expect(site.count('/frag')).toBe(1);
    expect(site.count('/variant') + site.count('/%76ariant')).toBe(1);
    expect(site.count('/pct')).toBe(1);
    // Each site request is one page of the listing: nothing was fetched twice.
    for (const [path, n] of site.hits)
      if (!path.startsWith('/chain/') && !path.startsWith('/loop-')) expect([path, n]).toEqual([path, 1]);
  });

  it('reads a sitemap index to its leaves and goes on past a dead link and a dead sitemap', () => {
    for (const leaf of ['/leaf/a1', '/leaf/a2', '/leaf/b1']) expect(visited.has(u(leaf))).toBe(true);
    expect(failed.get(u('/leaf/dead'))).toBe('http_404');
    expect(site.hits.get('/sitemap-gone.xml')).toBe(1);
  });

  it('follows no redirect to another host or into a disallowed path, and records why', () => {
    expect(site.otherHits()).toBe(0);
    expect(skipped.get(u('/to-other'))).toBe('external_link');
    expect(site.count('/trap/inner')).toBe(0);
    expect(skipped.get(u('/to-disallowed'))).toBe('robots_txt');
  });

  it('resolves links against <base href> and against the URL a redirect landed on', () => {
    expect(site.hits.get('/base-target/page')).toBe(1);
    expect(site.hits.get('/based/page')).toBeUndefined();
    expect(visited.has(u('/dir/'))).toBe(true);
    expect(skipped.get(u('/dir'))).toBe('redirected');
    expect(site.hits.get('/dir/child')).toBe(1);
    expect(site.hits.get('/child')).toBeUndefined();
  });

  it('fails a gzip bomb and a 200 MB file with a clear reason, in bounded memory, and the rest stays readable', async () => {
    expect(failed.get(u('/bomb'))).toBe('too_large');
    expect(failed.get(u('/huge.bin'))).toBe('too_large');
    // The crawler hung up soon after its 10 MB: the server did not get to write the 200 MB.
    expect(site.hugeBytesSent()).toBeLessThan(64 * 1024 * 1024);
    // Neither the 256 MB the bomb inflates to nor the 200 MB file was held.
    expect(peakRss - baseRss).toBeLessThan(160 * 1024 * 1024);
    const pages = await all(client.contents(uuid, { formats: ['text'] }));
    expect(pages.length).toBe(visited.size);
  });

  it.each(Object.entries(ENCODED))('decodes a page in %s', async (name, { text }) => {
    const [page] = await all(client.contents(uuid, { url: u(`/enc/${name}`), formats: ['text', 'markdown'] }));
    expect(page?.content.text).toContain(text.replace(/ — .*/, ''));
    expect(page?.content.text).toContain(text);
    expect(page?.content.markdown).toContain(text);
  });

  it('records a PDF and an unlabelled PNG with their type, converted to nothing and not indexed', async () => {
    const [pdf] = await all(client.contents(uuid, { url: u('/doc.pdf'), formats: ['text', 'markdown', 'html'] }));
    expect(pdf?.content).toEqual({ text: null, markdown: null, html: null });
    const [png] = await all(client.contents(uuid, { url: u('/blob'), formats: ['text'] }));
    expect(png?.content.text).toBeNull();
    // The PDF's own words; the index page names the file, which is no hit on these.
    const res = await client.search({ crawls: [uuid], query: 'endobj obj' });
    expect(res.results).toEqual([]);
  });
});

describe('the crawler reaching out', () => {
  it('reaches /robots.txt-disallowed pages when told not to respect robots.txt (the negative control)', async () => {
    site.hits.clear();
    const { uuid } = await client.start({ url: `${site.origin}/`, respect_robots_txt: false, max_depth: 1 });
    await client.wait(uuid, { pollInterval: 50, timeout: 60_000 });
    expect(site.hits.get('/trap/secret')).toBe(1);
    expect(site.hits.get('/robots.txt')).toBeUndefined();
  }, 90_000);

  it('never leaves the machine: a redirect to a public host is skipped as offline, even with external links on', async () => {
    site.hits.clear();
    const { uuid } = await client.start({ url_list: [`${site.origin}/to-public`, `${site.origin}/to-other`] });
    await client.wait(uuid, { pollInterval: 50, timeout: 30_000 }).catch(() => undefined);
    const skipped = await listing(uuid, 'skipped');
    expect(skipped.get(`${site.origin}/to-public`)).toBe('offline_emulator');
    // With a URL list there is no scope but the machine: the other loopback host is fetched.
    expect(site.otherHits()).toBe(1);
  }, 60_000);

  it('stops a crawl without page_limit at the emulator limit, and says page_limit', async () => {
    const bounded = await startEmulator({ crawler: { pageLimit: 12 } });
    try {
      const c = new CrawlerClient({ key: bounded.apiKey, baseUrl: bounded.apiUrl });
      const { uuid } = await c.start({ url: `${site.origin}/calendar?month=2030-01`, max_concurrency: 2 });
      const status = await c.wait(uuid, { pollInterval: 50, timeout: 60_000 });
      expect(status.state).toMatchObject({ stop_reason: 'page_limit', urls_visited: 12 });
    } finally {
      await bounded.close();
    }
  }, 60_000);

  it('refuses crawler limits that are not whole numbers in range', async () => {
    await expect(startEmulator({ crawler: { maxResponseBytes: Number.NaN } })).rejects.toThrow(
      /`crawler.maxResponseBytes` must be a whole number of bytes, from 1024 to 2147483647 \(got NaN\)/,
    );
    await expect(startEmulator({ crawler: { pageLimit: 0 } })).rejects.toThrow(/`crawler.pageLimit`/);
  });
});
