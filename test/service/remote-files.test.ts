/**
 * A remote browser, not a local one: downloads reach the folder each library uses and uploads
 * reach the page, carried across the wire by the connectors; the emulator itself never writes
 * into a folder a client named nor reads a path a client sent.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPlaywright } from '../../packages/cloud-browser/src/connect/playwright.js';
import { connectPuppeteer } from '../../packages/cloud-browser/src/connect/puppeteer.js';
import { buildBrowserUrl } from '../../packages/cloud-browser/src/index.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { type DownloadSite, LARGE, SMALL, startDownloadSite } from '../support/download-site.js';
import { eventually } from '../support/drivers.js';
import { rawCdp } from '../support/raw-cdp.js';
import { rejection } from '../support/rejection.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let emulator: Emulator;
let files: DownloadSite;
let work = '';

beforeAll(async () => {
  emulator = await startEmulator();
  work = mkdtempSync(join(tmpdir(), 'remote-files-'));
  files = await startDownloadSite();
});
afterAll(async () => {
  await emulator?.close();
  files?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const options = () => ({ browser_url: emulator.browserUrl, api_key: emulator.apiKey });

describe('Playwright', () => {
  it('saveAs, path and createReadStream give the remote download byte for byte; 150 MB fails with its reason logged', async () => {
    const logged: string[] = [];
    const logger = {
      debug: () => {},
      info: () => {},
      warn: (m: string) => logged.push(m),
      error: (m: string) => logged.push(m),
    };
    const session = await connectPlaywright(chromium, options(), { logger });
    try {
      const page = await session.browser.contexts()[0]!.newPage();
      await page.goto(files.origin);
      for (const [id, bytes] of [
        ['#small', SMALL],
        ['#large', LARGE],
      ] as const) {
        const [download] = await Promise.all([page.waitForEvent('download'), page.click(id)]);
        const target = join(work, `saved-${download.suggestedFilename()}`);
        await download.saveAs(target);
        expect(sha(readFileSync(target))).toBe(sha(bytes));
        expect(sha(readFileSync(await download.path()))).toBe(sha(bytes));
        const streamed: Buffer[] = [];
        for await (const chunk of await download.createReadStream()) streamed.push(chunk as Buffer);
        expect(sha(Buffer.concat(streamed))).toBe(sha(bytes));
        expect(await download.failure()).toBeNull();
      }
      const [huge] = await Promise.all([page.waitForEvent('download'), page.click('#huge')]);
      expect(await huge.failure()).toBe('canceled');
      expect(logged.join('\n')).toMatch(/download huge\.bin failed: 150\.0 MB is over the 100 MB a download may be/);
    } finally {
      await session.close();
    }
  }, 90_000);
});

describe('Puppeteer', () => {
  it('a local download folder gets the remote files; uploadFile sends the contents, 60 MB is refused', async () => {
    const session = await connectPuppeteer(puppeteer, options());
    const folder = join(work, 'puppeteer-downloads');
    try {
      const page = await session.browser.newPage();
      const cdp = await session.browser.target().createCDPSession();
      await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: folder });
      await page.goto(files.origin);
      // One after the other: a second link clicked at once would abort the first navigation.
      await page.click('#small');
      await eventually(() => existsSync(join(folder, 'small.txt')), Boolean, 30_000);
      await page.click('#large');
      await eventually(
        () => (existsSync(folder) ? readdirSync(folder).filter((n) => !n.startsWith('.')) : []),
        (n) => n.length === 2,
        30_000,
      );
      expect(readdirSync(folder).sort()).toEqual(['large.bin', 'small.txt']);
      expect(sha(readFileSync(join(folder, 'small.txt')))).toBe(sha(SMALL));
      expect(sha(readFileSync(join(folder, 'large.bin')))).toBe(sha(LARGE));

      const file = join(work, 'upload.bin');
      const bytes = randomBytes(1024 * 1024);
      writeFileSync(file, bytes);
      const input = await page.$('input#file');
      await input!.uploadFile(file);
      expect(await page.$eval('#file', (el) => (el as HTMLInputElement).files?.[0]?.size)).toBe(bytes.length);
      await Promise.all([page.waitForNavigation(), page.click('#send')]);
      const received = files.uploads.at(-1)!;
      expect(received.indexOf(bytes)).toBeGreaterThan(0);
      expect(received.toString('latin1')).toContain('filename="upload.bin"');

      const big = join(work, 'big.bin');
      writeFileSync(big, Buffer.alloc(60 * 1024 * 1024));
      await page.goto(files.origin);
      const refused = await rejection((await page.$('input#file'))!.uploadFile(big));
      expect(String(refused)).toMatch(
        /the files to upload weigh 60\.0 MB in all, over the 50\.0 MB a remote browser takes/,
      );
    } finally {
      await session.close();
    }
  }, 90_000);
});

describe('the emulator, to a client with no connector', () => {
  it('never writes into the folder it named and never reads a path it sent', async () => {
    const cdp = await rawCdp(buildBrowserUrl(options()));
    const folder = mkdtempSync(join(work, 'raw-'));
    try {
      await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: folder, eventsEnabled: true });
      const page = await cdp.newPage(files.origin);
      await cdp.send('Runtime.evaluate', { expression: `document.getElementById('small').click()` }, page);
      await eventually(
        () => cdp.events.some((e) => e.method === 'Browser.downloadProgress' && e.params.state === 'completed'),
        Boolean,
        10_000,
      );
      expect(readdirSync(folder)).toEqual([]);
      const { metadata } = await cdp.send<{ metadata: Record<string, number> }>(
        'ScrapiumBrowser.getDownloadsMetadatas',
      );
      expect(metadata).toEqual({ 'small.txt': 1024 });
      const { root } = await cdp.send<{ root: { nodeId: number } }>('DOM.getDocument', {}, page);
      const { nodeId } = await cdp.send<{ nodeId: number }>(
        'DOM.querySelector',
        { nodeId: root.nodeId, selector: '#file' },
        page,
      );
      const local = join(work, 'upload.bin');
      writeFileSync(local, 'local bytes');
      const error = await rejection(cdp.send('DOM.setFileInputFiles', { files: [local], nodeId }, page));
      expect(String(error)).toMatch(
        /the browser is remote and cannot read .*upload\.bin on your machine: send the file's contents instead/,
      );
    } finally {
      await cdp.close();
    }
  });
});
