/**
 * The session's downloads (ScrapiumBrowser) and its rendered content (Page.getRenderedContent)
 * against the emulator: files stay on the emulator's side, read back byte for byte; a file over
 * 100 MB is refused and the session goes on; the rendered page inlines its frames.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { type DownloadSite, LARGE, SMALL, startDownloadSite } from '../support/download-site.js';
import { eventually } from '../support/drivers.js';
import { rejection } from '../support/rejection.js';
import { serviceDrivers } from '../support/service-drivers.js';
import { type ServiceSite, startServiceSite } from '../support/service-site.js';

// A 1x1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

let emulator: Emulator;
let files: DownloadSite;
let site: ServiceSite;

beforeAll(async () => {
  emulator = await startEmulator();
  files = await startDownloadSite();
  site = await startServiceSite({
    '/framed': `<!doctype html><title>framed</title><h1>Main heading</h1><p>Main text with <a href="/rel">a link</a>.</p>
<iframe src="/same"></iframe><iframe id="far"></iframe>
<script>document.getElementById('far').src = location.href.replace('127.0.0.1', '127.0.0.2').replace('/framed', '/other');</script>`,
    '/same': '<!doctype html><body><p>Same-site frame text</p></body>',
    '/other': '<!doctype html><body><p>Other-site frame text</p></body>',
    '/image.png': { type: 'image/png', body: PNG },
    '/plain.txt': { type: 'text/plain', body: 'just text' },
  });
});
afterAll(async () => {
  await emulator?.close();
  files?.close();
  await site?.close();
});

describe('downloads', () => {
  it('keeps files on the emulator side, read back byte for byte; 150 MB is refused and the session goes on', async () => {
    const [driver] = serviceDrivers;
    const { session, page, service } = await driver!.open({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
    });
    try {
      await page.goto(files.origin);
      expect(await service.downloads.has()).toBe(false);
      // One after the other: a second link clicked at once would abort the first navigation.
      await page.evaluate(`document.getElementById('small').click()`);
      await eventually(
        () => service.downloads.list(),
        (m) => 'small.txt' in m,
        20_000,
      );
      await page.evaluate(`document.getElementById('large').click()`);
      const listed = await eventually(
        () => service.downloads.list(),
        (m) => Object.keys(m).length === 2,
        20_000,
      );
      expect(listed).toEqual({ 'small.txt': 1024, 'large.bin': LARGE.length });
      expect((await service.downloads.get('small.txt')).equals(SMALL)).toBe(true);
      expect((await service.downloads.get('large.bin')).equals(LARGE)).toBe(true);
      await page.evaluate(`document.getElementById('huge').click()`);
      const refused = await eventually(
        () => rejection(service.downloads.get('huge.bin')),
        (e) => /over 100 MB/.test(String(e)),
        20_000,
      );
      expect(String(refused)).toMatch(/huge\.bin was not kept: the file is over 100 MB/);
      expect(Object.keys(await service.downloads.list()).sort()).toEqual(['large.bin', 'small.txt']);
      // The same name again is kept beside the first.
      await page.evaluate(`document.getElementById('small').click()`);
      await eventually(
        () => service.downloads.list(),
        (m) => 'small (1).txt' in m,
        20_000,
      );
      const all = await service.downloads.getAll({ delete: true });
      expect([...all.keys()].sort()).toEqual(['large.bin', 'small (1).txt', 'small.txt']);
      expect(await service.downloads.has()).toBe(false);
    } finally {
      await session.close();
    }
  }, 90_000);
});

describe.each(serviceDrivers)('rendered content ($name)', (driver) => {
  it('inlines same-site and out-of-process frames, converts to Markdown, gives images as bytes', async () => {
    const { session, page, service } = await driver.open({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
    });
    try {
      await page.goto(`${site.url}/framed`);
      await eventually(
        () => page.evaluate<number>(`document.getElementById('far').contentWindow ? 1 : 0`),
        (n) => n === 1,
      );
      await new Promise((r) => setTimeout(r, 500));
      const html = await service.renderedContent();
      expect(html.type).toBe('text');
      expect(html.content).toContain('<h1>Main heading</h1>');
      expect(html.content).toContain('<div data-iframe-src="/same"><p>Same-site frame text</p>');
      expect(html.content).toContain('<p>Other-site frame text</p>');
      expect(html.content).toContain('document.getElementById');
      const bare = await service.renderedContent({ renderIframe: false });
      expect(bare.content).not.toContain('frame text');
      const markdown = await service.renderedContent({ format: 'markdown' });
      expect(markdown.type).toBe('markdown');
      expect(markdown.content).toContain('Main heading');
      expect(markdown.content).toContain(`[a link](${site.url}/rel)`);
      await page.goto(`${site.url}/image.png`);
      expect(await service.renderedContent()).toEqual({ type: 'binary', content: PNG.toString('base64') });
      await page.goto(`${site.url}/plain.txt`);
      expect(await service.renderedContent()).toEqual({ type: 'text', content: 'just text' });
    } finally {
      await session.close();
    }
  });
});
