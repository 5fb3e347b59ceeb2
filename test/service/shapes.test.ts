/**
 * Every command of the service's own domains the emulator answers, called once over a raw CDP
 * session, and every event it sends: each answer and event has exactly the shape the one
 * description (SERVICE_COMMANDS, SERVICE_EVENTS) gives it, nothing missing and nothing more.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  SERVICE_COMMANDS,
  SERVICE_EVENTS,
  type ServiceCommand,
  type ServiceEvent,
} from '../../packages/cloud-browser/src/index.js';
import { type Emulator, startEmulator, testCaptchaPage } from '../../packages/emulator/src/index.js';
import { eventually } from '../support/drivers.js';
import { serviceDrivers } from '../support/service-drivers.js';
import { type ServiceSite, startServiceSite } from '../support/service-site.js';

let emulator: Emulator;
let site: ServiceSite;

beforeAll(async () => {
  emulator = await startEmulator();
  site = await startServiceSite({
    '/': `<!doctype html><title>shapes</title><body style="height: 2000px">
<input id="q"><button id="go">Go</button><select id="s"><option value="1">One</option></select>
<div class="cf-turnstile" data-sitekey="1x00000000000000000000AA"></div>
<div class="cf-turnstile" data-sitekey="2x00000000000000000000AB"></div></body>`,
    '/hold': testCaptchaPage('hold'),
  });
});
afterAll(async () => {
  await emulator?.close();
  await site?.close();
});

const css = (query: string) => ({ type: 'css', query });

it('answers and events have exactly the described shapes', async () => {
  const [driver] = serviceDrivers;
  const { session, page } = await driver!.open({
    browser_url: emulator.browserUrl,
    api_key: emulator.apiKey,
    solve_captcha: true,
  });
  try {
    const cdp = await page.cdp();
    const events: { event: ServiceEvent; params: unknown }[] = [];
    for (const event of Object.keys(SERVICE_EVENTS) as ServiceEvent[]) {
      cdp.on(event, ((params: unknown) => events.push({ event, params })) as never);
    }
    await page.goto(`${site.url}/`);
    await eventually(
      () => events.filter((e) => /captchaSolved|captchaError/.test(e.event)).length,
      (n) => n === 2,
      15_000,
    );
    const { frames } = (await cdp.send('Antibot.getFrames')) as { frames: { frameId: string }[] };
    const mainFrame = frames[0]?.frameId ?? '';
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
      nodes: { nodeId: string; role?: { value?: string } }[];
    };
    const button = nodes.find((n) => n.role?.value === 'button')?.nodeId ?? '';
    const solved = events.find((e) => e.event === 'Antibot.captchaSolved')?.params as { detectionId: string };
    const calls: [ServiceCommand, Record<string, unknown>][] = [
      ['Antibot.moveTo', { selector: css('#go'), steady: true }],
      ['Antibot.clickOn', { selector: css('#go'), clickCount: 2, button: 'left', clickDuration: 30 }],
      ['Antibot.clickOn', { selector: css('#missing') }],
      ['Antibot.hover', { selector: css('#q'), holdTime: 10 }],
      ['Antibot.dragAndDrop', { from: css('#q'), to: css('#go') }],
      ['Antibot.clickAndHold', { selector: css('#go'), holdTime: 10 }],
      ['Antibot.clickAndSlide', { selector: css('#go'), distance: 20 }],
      ['Antibot.scroll', { delta: 100 }],
      ['Antibot.typeText', { text: 'a', wpm: 2000 }],
      ['Antibot.fill', { selector: css('#q'), text: 'ab', clear: true, wpm: 2000 }],
      ['Antibot.pressKey', { key: 'Tab' }],
      ['Antibot.selectOption', { selector: css('#s'), index: 0 }],
      ['Antibot.showCursor', {}],
      ['Antibot.getFrames', {}],
      ['Antibot.locateElement', { frameId: mainFrame, selector: css('#go'), relativePosition: { x: 0.5, y: 0.5 } }],
      ['Antibot.locateElementAcrossFrames', { selector: { type: 'xpath', query: '//button' } }],
      ['Antibot.waitForElement', { selector: css('#go'), visible: true, timeout: 1000 }],
      ['Antibot.isElementVisible', { selector: css('#go') }],
      ['Antibot.getMousePosition', {}],
      ['Antibot.performAction', { axNodeId: button, action: 'focus' }],
      ['Antibot.findAndPerformAction', { selector: { type: 'role', query: 'button' }, action: 'hover', name: 'Go' }],
      ['Antibot.captchaDisable', {}],
      ['Antibot.captchaEnable', {}],
      ['Antibot.getSolvedCaptchas', {}],
      ['Antibot.solveCaptcha', { detectionId: solved.detectionId, timeout: 5 }],
      ['ScrapiumBrowser.hasDownloads', {}],
      ['ScrapiumBrowser.getDownloadsMetadatas', {}],
      ['ScrapiumBrowser.getDownloads', { delete: false }],
      ['Page.getRenderedContent', { renderIframe: true }],
      ['Page.getRenderedContent', { format: 'markdown' }],
      ['Antibot.disable', {}],
    ];
    const answered = new Set<string>();
    for (const [method, params] of calls) {
      const answer = await cdp.send(method, params).catch((e: Error) => ({ error: e.message }));
      const problem = SERVICE_COMMANDS[method].result.check(answer, '', true);
      expect(problem, `${method} answered ${JSON.stringify(answer).slice(0, 200)}`).toBeUndefined();
      answered.add(method);
    }
    const offered = Object.keys(SERVICE_COMMANDS).filter(
      (m) => !m.startsWith('WebMCP.') && m !== 'ScrapiumBrowser.getDownload',
    );
    expect(offered.filter((m) => !answered.has(m))).toEqual([]);
    await page.goto(`${site.url}/hold`);
    await eventually(
      () => events.filter((e) => /captchaSolved|captchaError/.test(e.event)).length,
      (n) => n === 3,
      15_000,
    );
    expect(new Set(events.map((e) => e.event))).toEqual(
      new Set([
        'Antibot.captchaDetected',
        'Antibot.captchaSolvingStarted',
        'Antibot.captchaSolved',
        'Antibot.captchaError',
      ]),
    );
    for (const { event, params } of events) {
      expect(SERVICE_EVENTS[event].check(params, '', true), `${event} ${JSON.stringify(params)}`).toBeUndefined();
    }
  } finally {
    await session.close();
  }
}, 60_000);
