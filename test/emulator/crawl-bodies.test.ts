/**
 * Where a crawl keeps its pages: a file of its own in the temporary folder, not the crawl's
 * memory; read back whole; not written again for what a refresh finds unchanged; gone when the
 * emulator closes.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { type CrawlConfig, CrawlerClient } from '../../packages/cloud-browser/src/crawler/index.js';
import { PageBodies } from '../../packages/emulator/src/crawler/bodies.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { startCrawlSite } from '../support/crawl-site.js';

const crawlFolders = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`cloud-browser-crawl-${process.pid}-`));

/** A crawl of the test site with `options`, run to its end; then `check` with its file of bodies. */
async function crawled(
  options: Partial<CrawlConfig>,
  check: (crawl: { emulator: Emulator; client: CrawlerClient; uuid: string; file: string }) => Promise<void>,
): Promise<void> {
  const emulator = await startEmulator({ warmBrowsers: 0 });
  const site = await startCrawlSite();
  try {
    const before = new Set(crawlFolders());
    const client = new CrawlerClient({ key: emulator.apiKey, baseUrl: emulator.apiUrl });
    const { uuid } = await client.start({ url: `${site.origin}/`, max_depth: 1, ...options });
    await client.wait(uuid, { pollInterval: 50 });
    const mine = crawlFolders().filter((n) => !before.has(n));
    expect(mine).toHaveLength(1);
    await check({ emulator, client, uuid, file: join(tmpdir(), mine[0] as string, 'bodies') });
  } finally {
    await emulator.close();
    await site.close();
  }
}

it("keeps a crawl's pages in a file of its own, reads them back, and removes it when the emulator closes", async () => {
  await crawled({ content_formats: ['html', 'markdown'] }, async ({ client, uuid, file }) => {
    const kept = readFileSync(file, 'utf8');
    const pages = [];
    for await (const page of client.contents(uuid, { formats: ['html', 'markdown'] })) pages.push(page);
    expect(pages.length).toBeGreaterThan(3);
    for (const page of pages) {
      expect(kept).toContain(page.content.html);
      expect(kept).toContain(page.content.markdown);
      expect(page.content.markdown).toMatch(/^# /);
    }
  });
  expect(crawlFolders()).toEqual([]);
});

it('writes nothing again for the pages a refresh finds unchanged', async () => {
  const options = {
    content_formats: ['html', 'markdown'],
    search: true,
    refresh: true,
    refresh_interval: 3600,
  } as const;
  await crawled(options, async ({ emulator, client, uuid, file }) => {
    const size = statSync(file).size;
    await emulator.crawler.advanceTime(3600 * 1000);
    await emulator.crawler.settled();
    expect((await client.status(uuid)).refresh).toMatchObject({ generation: 1 });
    expect(statSync(file).size).toBe(size);
    const pages = [];
    for await (const page of client.contents(uuid, { formats: ['markdown'] })) pages.push(page);
    expect(pages.length).toBeGreaterThan(3);
    for (const page of pages) expect(page.content.markdown).toMatch(/^# /);
    expect((await client.search({ crawls: [uuid], query: 'document' })).results.length).toBeGreaterThan(0);
  });
});

it('reads back bodies of every size in order, while gathered in memory and once written, and a large one whole', () => {
  const bodies = new PageBodies();
  try {
    const small = Array.from({ length: 300 }, (_, i) => `page ${i} é ${'x'.repeat(i * 37)}`);
    const large = new TextEncoder().encode(`${'€'.repeat(600_000)}end`);
    const refs = small.slice(0, 150).map((b) => bodies.put(b));
    refs.push(bodies.put(large));
    refs.push(...small.slice(150).map((b) => bodies.put(b)));
    const expected = [...small.slice(0, 150), new TextDecoder().decode(large), ...small.slice(150)];
    // Read back while some are still gathered in memory, then once all are written.
    expect(refs.map((r) => bodies.get(r))).toEqual(expected);
    bodies.settle();
    expect(refs.map((r) => bodies.get(r))).toEqual(expected);
    expect(bodies.size).toBe(expected.reduce((n, b) => n + Buffer.byteLength(b), 0));
  } finally {
    bodies.close();
  }
  expect(() => bodies.get({ at: 0, length: 1 })).toThrow('no longer kept');
});
