/**
 * The Antibot domain's input through real Playwright and Puppeteer against the emulator: what a
 * page observes is a person's input (a curved path of many moves, presses of human length, keys
 * one by one at the asked pace, the wheel), on the right element, in any frame.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isConfigError, isProtocolError } from '../../packages/cloud-browser/src/index.js';
import type { ServiceProtocol } from '../../packages/cloud-browser/src/service/protocol.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { eventually } from '../support/drivers.js';
import { rejection } from '../support/rejection.js';
import { type ServicePage, serviceDrivers } from '../support/service-drivers.js';
import { LOGGER, type ServiceSite, startServiceSite } from '../support/service-site.js';

interface Logged {
  type: string;
  t: number;
  x: number;
  y: number;
  key?: string;
  target: string;
  trusted: boolean;
  buttons: number;
}

const INPUT_PAGE = `<!doctype html><title>input</title>
<style>body { margin: 0; height: 3000px } button, input, select, #menu { position: absolute }</style>
<button id="buy" style="left: 400px; top: 300px; width: 120px; height: 40px">Buy</button>
<input id="name" style="left: 100px; top: 100px; width: 200px">
<button id="hidden" style="display: none; left: 10px; top: 10px">Hidden</button>
<button id="far" style="left: 50px; top: 2200px; width: 100px; height: 30px">Far</button>
<select id="sel" style="left: 100px; top: 200px"><option value="a">Alpha</option><option value="b">Beta</option></select>
<div id="menu" style="left: 600px; top: 100px"><span id="opener" role="button">Choose</span>
  <ul id="list" style="display: none; margin: 0"><li data-value="red">Red</li><li data-value="green">Green</li></ul></div>
<div id="zone" style="position: absolute; left: 50px; top: 400px; width: 200px; height: 100px; background: #eee"></div>
<div id="drop" style="position: absolute; left: 300px; top: 420px; width: 100px; height: 100px; background: #ddd"></div>
<iframe id="frame" style="position: absolute; left: 450px; top: 500px; width: 300px; height: 200px; border: 0"></iframe>
<script>
document.getElementById('opener').addEventListener('click', () => { document.getElementById('list').style.display = 'block'; });
for (const li of document.querySelectorAll('li')) li.addEventListener('click', () => { window.picked = li.dataset.value; });
</script>
${LOGGER}`;

const FRAME_PAGE = `<!doctype html><title>frame</title><body style="margin: 0">
<button id="inner" style="position: absolute; left: 40px; top: 60px; width: 100px; height: 40px">Inner</button>${LOGGER}</body>`;

let emulator: Emulator;
let site: ServiceSite;

beforeAll(async () => {
  emulator = await startEmulator();
  site = await startServiceSite({ '/input': INPUT_PAGE, '/frame': FRAME_PAGE });
});
afterAll(async () => {
  await emulator?.close();
  await site?.close();
});

const css = (query: string) => ({ type: 'css' as const, query });

/** How far the path strays from the straight line between its ends, at most. */
function curvature(points: { x: number; y: number }[]): number {
  const a = points[0]!;
  const b = points.at(-1)!;
  const len = Math.hypot(b.x - a.x, b.y - a.y) || 1;
  return Math.max(...points.map((p) => Math.abs((b.x - a.x) * (a.y - p.y) - (a.x - p.x) * (b.y - a.y)) / len));
}

describe.each(serviceDrivers)('$name', (driver) => {
  let page: ServicePage;
  let service: ServiceProtocol;
  let raw: unknown;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const opened = await driver.open({ browser_url: emulator.browserUrl, api_key: emulator.apiKey });
    ({ page, service, raw } = opened);
    close = () => opened.session.close();
  });
  afterAll(async () => close?.());

  const load = async () => {
    await page.goto(`${site.url}/input`);
    await page.evaluate(`document.getElementById('frame').src = '${site.otherUrl}/frame'`);
    await page.evaluate(`new Promise((r) => document.getElementById('frame').onload = r)`);
    await page.evaluate('window.log.length = 0');
  };
  const log = () => page.evaluate<Logged[]>('window.log');

  it('clickOn travels a curved way in many moves and presses for a human time, on the element', async () => {
    await load();
    expect(await service.antibot.clickOn({ selector: css('#buy') })).toEqual({ success: true });
    const events = await log();
    const down = events.findIndex((e) => e.type === 'mousedown');
    const moves = events.slice(0, down).filter((e) => e.type === 'mousemove');
    expect(moves.length).toBeGreaterThanOrEqual(12);
    expect(events.slice(0, down).filter((e) => e.type === 'pointermove').length).toBe(moves.length);
    expect(curvature(moves)).toBeGreaterThan(2);
    const up = events.find((e) => e.type === 'mouseup')!;
    expect(up.t - events[down]!.t).toBeGreaterThanOrEqual(40);
    expect(up.t - events[down]!.t).toBeLessThan(1000);
    const click = events.find((e) => e.type === 'click')!;
    expect(click.target).toBe('buy');
    expect(click.x).toBeGreaterThanOrEqual(400);
    expect(click.x).toBeLessThanOrEqual(520);
    expect(events.every((e) => e.trusted)).toBe(true);
  });

  it('answers success: false with the reason for a missing or hidden element, never a protocol error', async () => {
    await load();
    const missing = await service.antibot.clickOn({ selector: css('#nothing') });
    expect(missing).toEqual({ success: false, errorMessage: 'no element matches css "#nothing"' });
    const hidden = await service.antibot.clickOn({ selector: css('#hidden') });
    expect(hidden.success).toBe(false);
    expect(hidden.errorMessage).toMatch(/cannot be seen: it is hidden \(display: none\)/);
    expect((await service.antibot.clickOn({ selector: { type: 'xpath', query: '//p[' } })).errorMessage).toMatch(
      /not a valid XPath/,
    );
    expect(await log()).toEqual([]);
  });

  it('fill types key by key at the words-per-minute pace, each key down, press, input, up', async () => {
    await load();
    const text = 'cloud browser rocks!';
    expect(await service.antibot.fill({ selector: css('#name'), text, wpm: 200 })).toEqual({ success: true });
    expect(await page.evaluate(`document.getElementById('name').value`)).toBe(text);
    const keys = (await log()).filter((e) => ['keydown', 'keypress', 'input', 'keyup'].includes(e.type));
    expect(keys.length).toBe(text.length * 4);
    for (let i = 0; i < text.length; i++) {
      expect(keys.slice(i * 4, i * 4 + 4).map((e) => e.type)).toEqual(['keydown', 'keypress', 'input', 'keyup']);
      expect(keys[i * 4]!.key).toBe(text[i]);
    }
    const downs = keys.filter((e) => e.type === 'keydown').map((e) => e.t);
    const gaps = downs
      .slice(1)
      .map((t, i) => t - downs[i]!)
      .sort((a, b) => a - b);
    const median = gaps[Math.floor(gaps.length / 2)]!;
    // 200 wpm is 60 ms a character; each gap varies by a third.
    expect(median).toBeGreaterThan(35);
    expect(median).toBeLessThan(150);
  });

  it('fill with clear replaces the text; paste puts it at once; typeText and pressKey type into the focus', async () => {
    await load();
    await service.antibot.fill({ selector: css('#name'), text: 'old', wpm: 1000 });
    await service.antibot.fill({ selector: css('#name'), text: 'new', clear: true, wpm: 1000 });
    expect(await page.evaluate(`document.getElementById('name').value`)).toBe('new');
    await service.antibot.fill({ selector: css('#name'), text: 'pasted text', clear: true, paste: true });
    expect(await page.evaluate(`document.getElementById('name').value`)).toBe('pasted text');
    await page.evaluate('window.log.length = 0');
    await service.antibot.typeText({ text: '!?', wpm: 600 });
    expect(await service.antibot.pressKey({ key: 'Enter' })).toEqual({ success: true });
    expect(await page.evaluate(`document.getElementById('name').value`)).toBe('pasted text!?');
    expect((await log()).filter((e) => e.type === 'keydown').map((e) => e.key)).toEqual(['!', '?', 'Enter']);
    expect((await service.antibot.pressKey({ key: 'Hyper' })).success).toBe(false);
  });

  it('scroll turns the wheel: to an element, by a delta, to the bottom', async () => {
    await load();
    const toFar = await service.antibot.scroll({ selector: css('#far') });
    expect(toFar).toEqual({ success: true, atBottom: false });
    expect(
      await page.evaluate(
        `(() => { const r = document.getElementById('far').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`,
      ),
    ).toBe(true);
    expect((await log()).filter((e) => e.type === 'wheel').length).toBeGreaterThan(3);
    await page.evaluate('scrollTo(0, 0)');
    await service.antibot.scroll({ delta: 500 });
    expect(Math.abs((await page.evaluate<number>('scrollY')) - 500)).toBeLessThan(5);
    expect(await service.antibot.scroll({ selector: { type: 'bottom', query: '' } })).toEqual({
      success: true,
      atBottom: true,
    });
  });

  it('hover, moveTo and getMousePosition agree on where the pointer is', async () => {
    await load();
    await service.antibot.moveTo({
      selector: css('#buy'),
      relativePosition: { x: 0, y: 0 },
      absoluteOffset: { x: 5, y: 6 },
    });
    expect(await service.antibot.getMousePosition()).toEqual({ success: true, x: 405, y: 306 });
    await service.antibot.hover({ selector: css('#name'), holdTime: 50 });
    expect((await log()).at(-1)!.target).toBe('name');
  });

  it('selectOption picks in a native <select> and in a custom dropdown', async () => {
    await load();
    expect(await service.antibot.selectOption({ selector: css('#sel'), text: 'Beta' })).toEqual({
      success: true,
      selectedValue: 'b',
      selectedText: 'Beta',
    });
    expect(await page.evaluate(`document.getElementById('sel').value`)).toBe('b');
    expect((await log()).some((e) => e.type === 'change')).toBe(true);
    const custom = await service.antibot.selectOption({ selector: css('#opener'), value: 'green' });
    expect(custom).toEqual({ success: true, selectedValue: 'green', selectedText: 'Green' });
    expect(await page.evaluate('window.picked')).toBe('green');
  });

  it('dragAndDrop, clickAndHold and clickAndSlide press, move with the button down and release where asked', async () => {
    await load();
    await service.antibot.dragAndDrop({ from: css('#zone'), to: css('#drop') });
    let events = await log();
    expect(events.find((e) => e.type === 'mousedown')!.target).toBe('zone');
    expect(events.filter((e) => e.type === 'mousemove' && e.buttons === 1).length).toBeGreaterThanOrEqual(12);
    expect(events.find((e) => e.type === 'mouseup')!.target).toBe('drop');
    await page.evaluate('window.log.length = 0');
    await service.antibot.clickAndHold({ selector: css('#buy'), holdTime: 400 });
    events = await log();
    const held = events.find((e) => e.type === 'mouseup')!.t - events.find((e) => e.type === 'mousedown')!.t;
    expect(held).toBeGreaterThanOrEqual(390);
    await page.evaluate('window.log.length = 0');
    await service.antibot.clickAndSlide({ selector: css('#zone'), distance: 150, overshoot: true });
    events = await log();
    const down = events.find((e) => e.type === 'mousedown')!;
    const up = events.find((e) => e.type === 'mouseup')!;
    expect(Math.round(up.x - down.x)).toBe(150);
    expect(Math.max(...events.filter((e) => e.type === 'mousemove').map((e) => e.x))).toBeGreaterThan(up.x);
  });

  it('sees every frame, out-of-process ones too, and clicks inside them', async () => {
    await load();
    const { frames } = await service.antibot.getFrames();
    expect(frames[0]).toMatchObject({ isMainFrame: true, isOopif: false, url: `${site.url}/input` });
    const inner = frames.find((f) => f.url === `${site.otherUrl}/frame`);
    expect(inner).toMatchObject({ isMainFrame: false, isOopif: true, origin: site.otherUrl });
    const located = await service.antibot.locateElement({ frameId: inner!.frameId, selector: css('#inner') });
    expect(located).toMatchObject({ success: true, boundsX: 490, boundsY: 560, boundsWidth: 100, boundsHeight: 40 });
    expect(await service.antibot.locateElementAcrossFrames({ selector: css('#inner') })).toEqual(located);
    expect(await service.antibot.clickOn({ selector: css('#inner') })).toEqual({ success: true });
    const frame = (raw as { frames(): { url(): string; evaluate(fn: string): Promise<unknown> }[] })
      .frames()
      .find((f) => f.url().startsWith(site.otherUrl))!;
    // The frame's renderer gets its input after the page's answers.
    const clicks = await eventually(
      async () => (await frame.evaluate('window.log')) as Logged[],
      (events) => events.some((e) => e.type === 'click'),
    );
    expect(clicks.find((e) => e.type === 'click')?.target).toBe('inner');
  });

  it('waits for elements, tells visibility, and acts through the accessibility tree', async () => {
    await load();
    await page.evaluate(
      `setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p id="late">late</p>'), 300)`,
    );
    const waited = await service.antibot.waitForElement({ selector: css('#late'), timeout: 5000 });
    expect(waited.success).toBe(true);
    expect((await service.antibot.waitForElement({ selector: css('#never'), timeout: 200 })).errorMessage).toMatch(
      /within 200 ms/,
    );
    expect(await service.antibot.isElementVisible({ selector: css('#buy') })).toEqual({ visible: true, exists: true });
    expect(await service.antibot.isElementVisible({ selector: css('#hidden') })).toMatchObject({
      visible: false,
      exists: true,
    });
    expect(await service.antibot.isElementVisible({ selector: css('#none') })).toMatchObject({
      visible: false,
      exists: false,
    });
    const found = await service.antibot.findAndPerformAction({
      selector: { type: 'role', query: 'button|Buy' },
      action: 'click',
    });
    expect(found).toMatchObject({ success: true, foundRole: 'button', foundName: 'Buy' });
    expect((await log()).find((e) => e.type === 'click')?.target).toBe('buy');
    await page.evaluate('window.log.length = 0');
    expect(await service.antibot.performAction({ axNodeId: found.foundNodeId!, action: 'click' })).toEqual({
      success: true,
    });
    expect(await service.antibot.clickOn({ selector: { type: 'axNodeId', query: found.foundNodeId! } })).toEqual({
      success: true,
    });
    expect((await log()).filter((e) => e.type === 'click').map((e) => e.target)).toEqual(['buy', 'buy']);
  });

  it('a wrong parameter is a protocol error naming it; the typed client refuses it before sending', async () => {
    const cdp = await page.cdp();
    const error = await rejection(cdp.send('Antibot.clickOn', { selector: { type: 'css' } }));
    expect(String(error)).toMatch(/Invalid parameters: selector\.query: expected a string, got nothing/);
    const typed = await rejection(service.antibot.clickOn({ selector: { type: 'label' as 'css', query: 'x' } }));
    expect(isConfigError(typed)).toBe(true);
    expect(String(typed)).toMatch(/selector\.type: expected one of "css", "xpath"/);
    const failing = await rejection(service.send('ScrapiumBrowser.getDownload', { filename: 'nope.txt' }));
    expect(isProtocolError(failing)).toBe(true);
    expect(String(failing)).toMatch(/no download named "nope.txt"/);
  });
});
