/**
 * Where a crawl keeps its pages: a file of its own in the temporary folder, not the crawl's
 * memory; read back whole; gone when the emulator closes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CrawlerClient } from '../../packages/cloud-browser/src/crawler/index.js';
import { startEmulator } from '../../packages/emulator/src/index.js';
import { startCrawlSite } from '../support/crawl-site.js';

const crawlFolders = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`cloud-browser-crawl-${process.pid}-`));

it("keeps a crawl's pages in a file of its own, reads them back, and removes it when the emulator closes", async () => {
  const emulator = await startEmulator({ warmBrowsers: 0 });
  const site = await startCrawlSite();
  try {
    const before = new Set(crawlFolders());
    const client = new CrawlerClient({ key: emulator.apiKey, baseUrl: emulator.apiUrl });
    const { uuid } = await client.start({
      url: `${site.origin}/`,
      max_depth: 1,
      content_formats: ['html', 'markdown'],
    });
    await client.wait(uuid, { pollInterval: 50 });
    const mine = crawlFolders().filter((n) => !before.has(n));
    expect(mine).toHaveLength(1);
    const kept = readFileSync(join(tmpdir(), mine[0] as string, 'bodies'), 'utf8');
    const pages = [];
    for await (const page of client.contents(uuid, { formats: ['html', 'markdown'] })) pages.push(page);
    expect(pages.length).toBeGreaterThan(3);
    for (const page of pages) {
      expect(kept).toContain(page.content.html);
      expect(kept).toContain(page.content.markdown);
      expect(page.content.markdown).toMatch(/^# /);
    }
  } finally {
    await emulator.close();
    await site.close();
  }
  expect(crawlFolders()).toEqual([]);
});
