/**
 * What the emulator's Antibot input costs beyond its own human timing: `Antibot.clickOn` and
 * `Antibot.fill` of 20 characters through the emulator, against the same standard `Input`
 * sequence (the events the page received, at the gaps it received them) sent directly over CDP
 * by the client. The human pauses are the point of the domain and are in both; the ratio and
 * the difference in milliseconds are what finding, measuring and aiming add.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { connectPlaywright, serviceProtocol } from '../packages/cloud-browser/src/connect/playwright.js';
import { startEmulator } from '../packages/emulator/src/index.js';
import { median, pairedRounds, report, showRatios } from './lib.js';

const ROUNDS = 11;
const PAGE = `<!doctype html><title>bench</title>
<button id="buy" style="position: absolute; left: 400px; top: 300px; width: 120px; height: 40px">Buy</button>
<input id="q" style="position: absolute; left: 100px; top: 100px; width: 300px">
<script>
window.log = [];
for (const type of ['mousemove', 'mousedown', 'mouseup', 'keydown', 'keyup'])
  addEventListener(type, (e) => log.push({ type, t: e.timeStamp, x: e.clientX, y: e.clientY, key: e.key }), true);
</script>`;

interface Logged {
  type: string;
  t: number;
  x: number;
  y: number;
  key: string;
}

const site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
site.listen(0, '127.0.0.1');
await once(site, 'listening');
const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
const emulator = await startEmulator();
const session = await connectPlaywright(chromium, { browser_url: emulator.browserUrl, api_key: emulator.apiKey });
const context = session.browser.contexts()[0];
if (!context) throw new Error('no default context');
const page = await context.newPage();
const service = await serviceProtocol(page);
const cdp = await context.newCDPSession(page);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The `Input` command that gives the page each logged event. */
function inputOf(e: Logged): [string, Record<string, unknown>] {
  switch (e.type) {
    case 'mousemove':
      return ['Input.dispatchMouseEvent', { type: 'mouseMoved', x: e.x, y: e.y }];
    case 'mousedown':
      return ['Input.dispatchMouseEvent', { type: 'mousePressed', x: e.x, y: e.y, button: 'left', clickCount: 1 }];
    case 'mouseup':
      return ['Input.dispatchMouseEvent', { type: 'mouseReleased', x: e.x, y: e.y, button: 'left', clickCount: 1 }];
    case 'keydown':
      return [
        'Input.dispatchKeyEvent',
        { type: 'keyDown', key: e.key, ...(e.key.length === 1 ? { text: e.key } : {}) },
      ];
    default:
      return ['Input.dispatchKeyEvent', { type: 'keyUp', key: e.key }];
  }
}

/** Send the logged events again, each at the moment the page saw it, counted from the first. */
async function replay(events: Logged[]): Promise<number> {
  const start = performance.now();
  const first = events[0]?.t ?? 0;
  for (const e of events) {
    await sleep(start + (e.t - first) - performance.now());
    const [method, params] = inputOf(e);
    await cdp.send(method as 'Input.dispatchMouseEvent', params as never);
  }
  return performance.now() - start;
}

const actions = {
  'Antibot.clickOn': () => service.antibot.clickOn({ selector: { type: 'css', query: '#buy' } }),
  'Antibot.fill (20 characters)': () =>
    service.antibot.fill({ selector: { type: 'css', query: '#q' }, text: 'twenty characters ok', clear: true }),
};

try {
  for (const [name, act] of Object.entries(actions)) {
    let recorded: Logged[] = [];
    const rounds = await pairedRounds(
      ROUNDS,
      async () => {
        await page.goto(url);
        const start = performance.now();
        const answer = await act();
        const ms = performance.now() - start;
        if (!answer.success) throw new Error(`${name} failed: ${answer.errorMessage}`);
        recorded = await page.evaluate(() => (window as unknown as { log: Logged[] }).log);
        return ms;
      },
      async () => {
        if (recorded.length === 0) return Number.NaN;
        await page.goto(url);
        return replay(recorded);
      },
      (ms) => ms,
    );
    // The first round's bare side ran before anything was recorded.
    const ratios = rounds.ratios.filter((r) => Number.isFinite(r));
    const ratio = median(ratios);
    const overhead = median(rounds.ours) - median(rounds.bare.filter((b) => Number.isFinite(b)));
    report(
      `antibot: ${name} through the emulator vs the same Input sequence sent directly`,
      ratio,
      '<= 1.10',
      ratio <= 1.1,
      `median of ${ratios.length} paired rounds (${showRatios(ratios)}); median ours ${median(rounds.ours).toFixed(0)} ms, overhead beyond the human timing ${overhead.toFixed(0)} ms`,
    );
  }
} finally {
  await session.close();
  await emulator.close();
  site.close();
}
