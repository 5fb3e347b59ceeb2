/**
 * The service's official SDK (npm `scrapfly-sdk`) as an oracle: what it does against the live
 * service, it must be able to do against the emulator. Its REST host is pointed at the
 * emulator; every call's result is asserted.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import {
  Crawl,
  CrawlerConfig,
  type CrawlerWebhookEventName,
  type CrawlerWebhookPayload,
  errors,
  parseCrawlerWebhook,
  ScrapflyClient,
  verifySignature,
} from 'scrapfly-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrawlerClient } from '../../packages/cloud-browser/src/crawler/index.js';
import {
  CRAWLER_EVENTS,
  type CrawlEventBody,
  LIVE_HEADER_PREFIX,
  parseCrawlEvent,
  serveWebhooks,
  type WebhookServer,
} from '../../packages/cloud-browser/src/webhooks/index.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { type CrawlSite, DOCS, startCrawlSite } from '../support/crawl-site.js';

const SECRET = 'whsec-official-sdk-7d1f';
// The eight events the SDK knows: it predates the search and refresh events.
const SDK_EVENTS = CRAWLER_EVENTS.filter(
  (e): e is CrawlerWebhookEventName =>
    !['crawler_search_ready', 'crawler_search_failed', 'crawler_updated'].includes(e),
);

let site: CrawlSite;
let emulator: Emulator;
let sdk: ScrapflyClient;
let hookServer: Server;
let ours: WebhookServer;
// What the SDK's own verification and parser made of each crawl delivery.
const sdkDeliveries: { verified: boolean; webhook: CrawlerWebhookPayload }[] = [];
const ourDeliveries: CrawlEventBody[] = [];
let refusedBySdk = 0;

beforeAll(async () => {
  site = await startCrawlSite();
  // A receiver written as the SDK's documentation says: express.json keeping the raw body,
  // then verifySignature and parseCrawlerWebhook. (The SDK's createServer takes only scrape
  // and ping deliveries, so crawl deliveries need a route of one's own.)
  const app = express();
  app.post(
    '/webhook',
    express.json({
      verify: (req, _res, buf) => {
        (req as unknown as { rawBody: Buffer }).rawBody = buf;
      },
    }),
    (req, res) => {
      const type = req.headers['x-scrapfly-webhook-resource-type'];
      if (type === 'ping') return void res.status(200).send('');
      const signature = String(req.headers['x-scrapfly-webhook-signature'] ?? '');
      const verified = verifySignature((req as unknown as { rawBody: Buffer }).rawBody, signature, SECRET);
      if (!verified || type !== 'crawl') {
        refusedBySdk++;
        return void res.status(401).send('');
      }
      sdkDeliveries.push({ verified, webhook: parseCrawlerWebhook(req.body) });
      res.status(200).send('');
    },
  );
  hookServer = app.listen(0, '127.0.0.1');
  await once(hookServer, 'listening');
  ours = await serveWebhooks({
    secrets: SECRET,
    headerPrefix: LIVE_HEADER_PREFIX,
    onDelivery: (d) => void ourDeliveries.push(parseCrawlEvent(d.body)),
  });
  emulator = await startEmulator({
    webhooks: {
      sdk: {
        url: `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/webhook`,
        secret: SECRET,
        headerPrefix: LIVE_HEADER_PREFIX,
      },
      ours: { url: ours.url, secret: SECRET, headerPrefix: LIVE_HEADER_PREFIX },
    },
  });
  sdk = new ScrapflyClient({ key: emulator.apiKey, host: emulator.apiUrl });
});

afterAll(async () => {
  await emulator.close();
  await ours.close();
  await new Promise((r) => hookServer.close(r));
  await site.close();
});

const config = (extra: Record<string, unknown>) =>
  new CrawlerConfig({ webhook_name: 'sdk', webhook_events: [...SDK_EVENTS], ...extra });

describe('the official SDK against the emulator', () => {
  let done: Crawl;

  beforeAll(async () => {
    done = new Crawl(
      sdk,
      config({ url: `${site.origin}/`, content_formats: ['markdown', 'html'], max_concurrency: 8 }),
    );
    await done.start();
    await done.wait({ pollInterval: 0.05, maxWait: 60 });
  });

  it('starts a crawl from a url (JSON) and waits for it with its own Crawl', async () => {
    const status = await done.status();
    expect(status.crawler_uuid).toBe(done.uuid);
    expect(status.status).toBe('DONE');
    expect(status.is_finished).toBe(true);
    expect(status.isComplete).toBe(true);
    expect(status.state).toMatchObject({
      urls_visited: DOCS + 3,
      urls_failed: 1,
      urls_skipped: 3,
      stop_reason: 'no_more_urls',
    });
    expect(status.state.stop_time).toBeGreaterThanOrEqual(status.state.start_time as number);
  });

  it('lists the URLs of each status, over several pages of text', async () => {
    const uuid = done.uuid as string;
    const visited: string[] = [];
    for (let page = 1; ; page++) {
      const { urls } = await sdk.crawlUrls(uuid, { status: 'visited', page, per_page: 7 });
      if (urls.length === 0) break;
      expect(urls.length).toBeLessThanOrEqual(7);
      visited.push(...urls.map((u) => u.url));
    }
    expect(visited).toHaveLength(DOCS + 3);
    expect(new Set(visited).size).toBe(DOCS + 3);
    const failed = await sdk.crawlUrls(uuid, { status: 'failed' });
    expect(failed.urls).toEqual([{ url: `${site.origin}/broken`, status: 'failed', reason: 'http_500' }]);
    const skipped = await sdk.crawlUrls(uuid, { status: 'skipped' });
    expect(Object.fromEntries(skipped.urls.map((u) => [new URL(u.url).pathname, u.reason]))).toEqual({
      '/private/a': 'robots_txt',
      '/private/b': 'robots_txt',
      '/page': 'external_link',
    });
  });

  it('reads contents as JSON over several pages, in plain mode, and null for a page never crawled', async () => {
    const uuid = done.uuid as string;
    const seen: string[] = [];
    for (let offset = 0; ; offset += 10) {
      const page = (await sdk.crawlContents(uuid, { format: 'markdown', limit: 10, offset })) as {
        contents: Record<string, Record<string, string>>;
        links: { next?: string | null };
      };
      for (const [url, byFormat] of Object.entries(page.contents)) {
        seen.push(url);
        expect(typeof byFormat.markdown).toBe('string');
      }
      if (!page.links.next) break;
      expect(new URL(page.links.next).searchParams.get('offset')).toBe(String(offset + 10));
    }
    expect(seen).toHaveLength(DOCS + 3);
    const plain = await sdk.crawlContents(uuid, { format: 'markdown', url: `${site.origin}/docs/7`, plain: true });
    expect(plain).toContain('# Doc 7');
    expect(plain).toContain('42 euros');
    expect(await done.read(`${site.origin}/docs/7`, 'html')).toContain('<h1>Doc 7</h1>');
    expect(await done.read(`${site.origin}/never-crawled`, 'markdown')).toBeNull();
  });

  it('reads a batch of contents from multipart/related', async () => {
    const got = await sdk.crawlContentsBatch(
      done.uuid as string,
      [`${site.origin}/docs/1`, `${site.origin}/docs/2`, `${site.origin}/nowhere`],
      ['markdown', 'html'],
    );
    expect(Object.keys(got).sort()).toEqual([`${site.origin}/docs/1`, `${site.origin}/docs/2`]);
    expect(got[`${site.origin}/docs/1`]?.markdown).toContain('# Doc 1');
    expect(got[`${site.origin}/docs/2`]?.html).toContain('<h1>Doc 2</h1>');
  });

  it('downloads the WARC and the HAR artifacts', async () => {
    const warc = await done.warc();
    expect([warc.data[0], warc.data[1]]).toEqual([0x1f, 0x8b]);
    expect(warc.data.length).toBeGreaterThan(1000);
    const har = JSON.parse(new TextDecoder().decode((await done.har()).data)) as {
      log: { entries: { request: { url: string } }[] };
    };
    expect(har.log.entries.map((e) => e.request.url)).toContain(`${site.origin}/docs/7`);
  });

  it('crawls a url_list (multipart), exactly its URLs', async () => {
    const list = [`${site.origin}/docs/3`, `${site.origin}/docs/4`, `${site.origin}/item/9`];
    const crawl = new Crawl(sdk, new CrawlerConfig({ url_list: list }));
    await crawl.start();
    await crawl.wait({ pollInterval: 0.05, maxWait: 30 });
    expect((await crawl.urls({ status: 'visited' })).urls.map((u) => u.url).sort()).toEqual(list.sort());
  });

  it('sees a running crawl, its pending URLs, cancels it and reads it cancelled', async () => {
    const { crawler_uuid: uuid, status } = await sdk.crawl(
      config({ url: `${site.origin}/`, max_concurrency: 1, delay: 300 }),
    );
    expect(status).toBe('PENDING');
    let running = await sdk.crawlStatus(uuid);
    for (let i = 0; i < 50 && running.state.urls_visited === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      running = await sdk.crawlStatus(uuid);
    }
    expect(running.isRunning).toBe(true);
    expect(running.is_finished).toBe(false);
    expect(running.is_success).toBeNull();
    expect((await sdk.crawlUrls(uuid, { status: 'pending' })).urls.length).toBeGreaterThan(0);
    expect(await sdk.crawlCancel(uuid)).toBe(true);
    const cancelled = await sdk.crawlStatus(uuid);
    expect(cancelled.isCancelled).toBe(true);
    expect(cancelled.is_finished).toBe(true);
    expect(cancelled.state.stop_reason).toBe('user_cancelled');
    expect(await sdk.crawlCancel(uuid)).toBe(true);
  });

  it('stops a crawl at its page_limit', async () => {
    const crawl = new Crawl(sdk, config({ url: `${site.origin}/`, page_limit: 3, max_concurrency: 1 }));
    await crawl.start();
    await crawl.wait({ pollInterval: 0.05, maxWait: 30 });
    expect((await crawl.status(false)).state).toMatchObject({ urls_visited: 3, stop_reason: 'page_limit' });
  });

  it('throws its typed crawler error for an unknown crawl, never a parse error or false', async () => {
    for (const call of [
      () => sdk.crawlStatus('no-such-crawl'),
      () => sdk.crawlUrls('no-such-crawl'),
      () => sdk.crawlContents('no-such-crawl', { format: 'html' }),
      () => sdk.crawlArtifact('no-such-crawl', 'warc'),
      () => sdk.crawlCancel('no-such-crawl'),
    ]) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(errors.ScrapflyCrawlerError);
      expect((error as { args: Record<string, unknown> }).args).toMatchObject({
        http_status_code: 404,
        code: 'ERR::CRAWLER::NOT_FOUND',
      });
    }
  });

  it('delivers every event the SDK knows, each verified and parsed by the SDK', async () => {
    await emulator.crawler.settled();
    expect(refusedBySdk).toBe(0);
    const events = new Set(sdkDeliveries.map((d) => d.webhook.event));
    expect([...events].sort()).toEqual([...SDK_EVENTS].sort());
    expect(sdkDeliveries.every((d) => d.verified)).toBe(true);
    const finished = sdkDeliveries.find(
      (d) => d.webhook.event === 'crawler_finished' && d.webhook.payload.crawler_uuid === done.uuid,
    );
    expect(finished?.webhook.payload).toMatchObject({
      seed_url: `${site.origin}/`,
      links: { status: `${emulator.apiUrl}/crawl/${done.uuid}/status` },
      state: { urls_visited: DOCS + 3 },
    });
    const skipped = sdkDeliveries.find((d) => d.webhook.event === 'crawler_url_skipped');
    const reasons = Object.values(
      (skipped?.webhook.payload as { urls?: Record<string, string> } | undefined)?.urls ?? {},
    );
    expect(reasons.length).toBeGreaterThan(0);
    expect(reasons.every((r) => /^[a-z_]+$/.test(r))).toBe(true);
  });
});

describe('the events the SDK predates, read with our parseCrawlEvent', () => {
  it('delivers search_ready, search_failed and updated with their D17 payloads', async () => {
    const client = new CrawlerClient({ key: emulator.apiKey, baseUrl: emulator.apiUrl });
    const events = ['crawler_search_ready', 'crawler_search_failed', 'crawler_updated'] as const;
    const { uuid } = await client.start({
      url: `${site.origin}/docs/1`,
      max_depth: 0,
      search: true,
      refresh: true,
      refresh_interval: 3600,
      webhook_name: 'ours',
      webhook_events: [...events],
    });
    await client.wait(uuid, { pollInterval: 30 });
    site.texts.set('/docs/1', 'Document one changed.');
    await emulator.crawler.advanceTime(3600 * 1000);
    site.texts.delete('/docs/1');
    const { uuid: failing } = await client.start({
      url: `${site.origin}/broken`,
      search: true,
      webhook_name: 'ours',
      webhook_events: [...events],
    });
    await client.wait(failing, { pollInterval: 30 }).catch(() => undefined);
    await emulator.crawler.settled();
    const mine = ourDeliveries.filter((d) => d.payload.crawler_uuid === uuid || d.payload.crawler_uuid === failing);
    expect(mine.map((d) => d.event)).toEqual(['crawler_search_ready', 'crawler_updated', 'crawler_search_failed']);
    const [ready, updated, failed] = mine;
    expect(ready?.event === 'crawler_search_ready' && ready.payload.search).toMatchObject({
      status: 'READY',
      documents: 1,
    });
    expect(updated?.event === 'crawler_updated' && updated.payload).toMatchObject({
      changed_urls: [`${site.origin}/docs/1`],
      refresh: { enabled: true, interval_seconds: 3600, generation: 1 },
    });
    expect(failed?.event === 'crawler_search_failed' && failed.payload).toMatchObject({
      action: '',
      search: { status: 'FAILED' },
      state: { stop_reason: 'seed_url_failed' },
    });
  });
});
