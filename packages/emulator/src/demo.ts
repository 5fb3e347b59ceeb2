/**
 * `cloud-browser demo`: the main job on the embedded emulator. A local site, a cloud browser
 * session with VNC through Playwright, a crawl with search, a streamed prompt answer, and
 * the crawl's webhooks verified by the reference receiver.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CloudBrowserError } from 'cloud-browser';
import { CrawlerClient } from 'cloud-browser/crawler';
import { env, Progress } from 'cloud-browser/internal';
import { connectPlaywright, type PlaywrightChromium } from 'cloud-browser/playwright';
import { parseCrawlEvent, serveWebhooks } from 'cloud-browser/webhooks';
import type { Browser } from 'playwright-core';
import { type Emulator, startEmulator } from './server.js';
import { openVncView } from './vnc/index.js';

const PAGES: Record<string, [string, string]> = {
  '/': [
    'Acme Rockets',
    'Acme builds small reusable rockets. See <a href="/pricing">pricing</a>, <a href="/features">features</a> and <a href="/faq">the FAQ</a>.',
  ],
  '/pricing': [
    'Pricing',
    'A launch costs 1200 dollars. Subscriptions start at 300 dollars per month and include ten launches.',
  ],
  '/features': ['Features', 'Every rocket lands itself, refuels in an hour and carries up to five kilograms.'],
  '/faq': ['FAQ', 'Refunds are given for weather cancellations. Support answers within one day. <a href="/">Home</a>'],
};

async function startSite() {
  const server = createServer((req, res) => {
    const page = PAGES[new URL(req.url ?? '/', 'http://demo').pathname];
    if (!page) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>${page[0]}</title><h1>${page[0]}</h1><p>${page[1]}</p>`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * The user's Playwright: `playwright-core`, else `playwright`. Neither installed (the command
 * from an installed package does not bring them): say what to install.
 */
async function playwrightChromium(): Promise<PlaywrightChromium<Browser>> {
  for (const name of ['playwright-core', 'playwright']) {
    try {
      return ((await import(name)) as { chromium: PlaywrightChromium<Browser> }).chromium;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    }
  }
  throw new CloudBrowserError(
    'the demo drives the browser with Playwright, which is not installed: run `npm install playwright-core` (no browser download needed), then `cloud-browser demo` again',
  );
}

/** Run the demo; resolves when everything it started is closed. */
export async function runDemo(out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<void> {
  const site = await startSite();
  const secret = `whsec-demo-${randomBytes(8).toString('hex')}`;
  const events: string[] = [];
  const lines: string[] = [];
  // Collected, not printed as they come, so they do not cut into the streamed answer.
  const receiver = await serveWebhooks({
    port: 0,
    secrets: secret,
    onDelivery: (d) => {
      const e = parseCrawlEvent(d.body);
      events.push(e.event);
      lines.push(`  ${d.resourceType} ${e.event}: ${d.body.length} bytes, signature verified`);
    },
  });
  const emulator = await startEmulator({ webhooks: { demo: { url: receiver.url, secret } } });
  const real = Boolean(env('CLOUD_API_KEY') && env('CLOUD_BROWSER_URL'));
  try {
    out(`emulator: browser ${emulator.browserUrl}  api ${emulator.apiUrl}`);
    out(
      real
        ? '\n1. Cloud browser (the real service, from CLOUD_BROWSER_URL)'
        : '\n1. Cloud browser (the emulator, a real local Chromium)',
    );
    await browserStep(out, emulator, site.url, real);
    await crawlStep(out, emulator, site.url);
    out('\n4. Webhooks received by the reference receiver');
    await emulator.crawler.settled();
    for (const line of lines) out(line);
    out(`  events: ${events.join(', ')}`);
    out('\ndone.');
  } finally {
    await emulator.close();
    await receiver.close();
    await site.close();
  }
}

/** Step 1: a cloud browser session with VNC, through Playwright. */
async function browserStep(out: (line: string) => void, emulator: Emulator, siteUrl: string, real: boolean) {
  const vncPassword = `demo-${randomBytes(4).toString('hex')}`;
  const session = await connectPlaywright(
    await playwrightChromium(),
    real
      ? { enable_vnc: true, vnc_password: vncPassword }
      : { browser_url: emulator.browserUrl, api_key: emulator.apiKey, enable_vnc: true, vnc_password: vncPassword },
    { retries: 2 },
  );
  try {
    const page = await session.browser.contexts()[0]?.newPage();
    await page?.goto(real ? 'https://example.com/' : siteUrl);
    out(`  title:   ${await page?.title()}`);
    out(`  run id:  ${session.runId}`);
    out(`  VNC:     ${session.vnc?.tcp.url}  password ${session.vnc?.tcp.password}`);
    out(`  noVNC:   ${session.vnc?.websocket.url}  password ${session.vnc?.websocket.password}`);
    if (!real && session.vnc) {
      // The emulator serves the noVNC view (not the native port): show that it answers.
      const view = await openVncView(session.vnc.websocket.url, session.vnc.websocket.password);
      view.socket.close();
      out(`  view:    RFB 3.8, password accepted, ${view.width}x${view.height} "${view.name}"`);
    }
  } finally {
    await session.close();
  }
}

/** Steps 2 and 3: a crawl with search, and a streamed answer to a prompt over it. */
async function crawlStep(out: (line: string) => void, emulator: Emulator, siteUrl: string) {
  out('\n2. Crawl with search (the emulator)');
  const crawler = new CrawlerClient({ key: emulator.apiKey, baseUrl: emulator.apiUrl });
  const { uuid } = await crawler.start({
    url: siteUrl,
    search: true,
    content_formats: ['markdown'],
    webhook_name: 'demo',
    webhook_events: ['crawler_started', 'crawler_search_ready', 'crawler_finished'],
  });
  out(`  crawl ${uuid}`);
  const progress = new Progress(false, process.stdout, '  ');
  const started = Date.now();
  const done = await crawler.wait(uuid, {
    pollInterval: 100,
    onProgress: (s) =>
      progress.update(s.state.urls_visited, undefined, s.state.urls_failed, (Date.now() - started) / 1000),
  });
  out(
    `  summary: ${done.state.urls_visited} visited, ${done.state.urls_failed} failed, ${done.state.urls_skipped} skipped, ${done.state.api_credit_used} credits`,
  );

  out('\n3. Prompt: "How much does a subscription cost?"');
  let answer = '  ';
  const stream = crawler.prompt({ crawls: [uuid], prompt: 'How much does a subscription cost?' });
  for await (const token of stream) {
    answer += token;
    process.stdout.write(token);
  }
  process.stdout.write('\n');
  if (!answer.trim()) throw new Error('the prompt gave no answer');
  for (const s of stream.sources) out(`  [${s.id}] ${s.url}`);
}
