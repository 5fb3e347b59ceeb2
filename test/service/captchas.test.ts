/**
 * Captchas through real Playwright and Puppeteer against the emulator: the test widgets solved by
 * the interaction they ask for, the vendors' test keys with a token, events in order, records
 * kept, nothing detected until detection is on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCaptchaError, SERVICE_EVENTS, type ServiceEvent } from '../../packages/cloud-browser/src/index.js';
import type { ServiceProtocol } from '../../packages/cloud-browser/src/service/protocol.js';
import { type Emulator, startEmulator, testCaptchaPage } from '../../packages/emulator/src/index.js';
import { eventually } from '../support/drivers.js';
import { rejection } from '../support/rejection.js';
import { serviceDrivers } from '../support/service-drivers.js';
import { type ServiceSite, startServiceSite } from '../support/service-site.js';

const turnstile = (key: string) => `<!doctype html><title>turnstile</title>
<form id="f"><div class="cf-turnstile" data-sitekey="${key}" data-callback="done"></div></form>
<script src="https://challenges.cloudflare.com/turnstile/v0/api.js" async></script>
<script>window.done = (t) => { document.title = 'token ' + t; };</script>`;
const RECAPTCHA = `<!doctype html><title>recaptcha</title>
<form><div class="g-recaptcha" data-sitekey="6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI" data-callback="done"></div></form>
<script>window.done = (t) => { document.title = 'token ' + t.slice(0, 6); };</script>`;

let emulator: Emulator;
let site: ServiceSite;

beforeAll(async () => {
  emulator = await startEmulator();
  site = await startServiceSite({
    '/checkbox': testCaptchaPage('checkbox'),
    '/slider': testCaptchaPage('slider'),
    '/hold': testCaptchaPage('hold'),
    '/pass': turnstile('1x00000000000000000000AA'),
    '/fail': turnstile('2x00000000000000000000AB'),
    '/real': turnstile('0x4AAAAAAAreal-site-key'),
    '/recaptcha': RECAPTCHA,
    '/plain': '<!doctype html><title>plain</title><p>nothing to solve</p>',
  });
});
afterAll(async () => {
  await emulator?.close();
  await site?.close();
});

/** Every captcha event the page's clients hear, in order. */
function listen(service: ServiceProtocol): { event: string; params: Record<string, unknown> }[] {
  const heard: { event: string; params: Record<string, unknown> }[] = [];
  for (const event of Object.keys(SERVICE_EVENTS).filter((e) => e.startsWith('Antibot.')) as ServiceEvent[]) {
    service.on(event, (params) => heard.push({ event, params: params as Record<string, unknown> }));
  }
  return heard;
}

describe.each(serviceDrivers)('$name', (driver) => {
  const open = (options: object = { solve_captcha: true }) =>
    driver.open({ browser_url: emulator.browserUrl, api_key: emulator.apiKey, ...options });

  it.each([
    ['checkbox', 'turnstile_checkbox'],
    ['slider', 'datadome_slider'],
    ['hold', 'perimeterx_hold'],
  ])('solves the %s test widget by its interaction, events in order, the record matching', async (kind, type) => {
    const { session, page, service, raw } = await open();
    try {
      const heard = listen(service);
      const solved = driver.waitForCaptcha(raw, { timeout: 20_000 });
      await page.goto(`${site.url}/${kind}`);
      const record = await solved;
      expect(record).toMatchObject({ type, status: 'solved', frameUrl: `${site.url}/${kind}` });
      expect(record.method).toBe(kind);
      expect(record.resolvedAt).toBeGreaterThanOrEqual(record.detectedAt);
      expect(await page.evaluate(`document.getElementById('result').textContent`)).toMatch(
        new RegExp(`^solved: cb-test\\.${kind}\\.`),
      );
      await eventually(
        () => heard.length,
        (n) => n >= 3,
      );
      expect(heard.map((h) => h.event)).toEqual([
        'Antibot.captchaDetected',
        'Antibot.captchaSolvingStarted',
        'Antibot.captchaSolved',
      ]);
      expect(new Set(heard.map((h) => h.params.detectionId))).toEqual(new Set([record.detectionId]));
      expect(heard[2]?.params).toEqual({ detectionId: record.detectionId, type, method: kind });
      expect((await service.antibot.getSolvedCaptchas()).records).toEqual([record]);
    } finally {
      await session.close();
    }
  });

  it('the widgets refuse what no person does: a click that jumps straight to the box', async () => {
    const { session, page } = await open({});
    try {
      await page.goto(`${site.url}/checkbox`);
      await page.evaluate(`(() => {
        const box = document.querySelector('.cb-captcha-target').getBoundingClientRect();
        return box.x;
      })()`);
      const cdp = await page.cdp();
      const box = await page.evaluate<{ x: number; y: number }>(
        `(() => { const r = document.querySelector('.cb-captcha-target').getBoundingClientRect(); return { x: r.x + 5, y: r.y + 5 }; })()`,
      );
      for (const type of ['mouseMoved', 'mousePressed', 'mouseReleased']) {
        await cdp.send('Input.dispatchMouseEvent', { type, ...box, button: 'left', clickCount: 1 });
      }
      await eventually(
        () => page.evaluate<string>(`document.querySelector('[data-state]').dataset.state`),
        (s) => s !== 'waiting',
      );
      expect(await page.evaluate(`document.querySelector('[data-state]').dataset.reason`)).toMatch(
        /jumped there|the press lasted/,
      );
    } finally {
      await session.close();
    }
  });

  it("a Turnstile with Cloudflare's always-pass key gets the token in its field and its callback called", async () => {
    const { session, page, service, raw } = await open();
    try {
      const solved = driver.waitForCaptcha(raw, { timeout: 20_000 });
      await page.goto(`${site.url}/pass`);
      const record = await solved;
      expect(record).toMatchObject({ type: 'turnstile', method: 'token', status: 'solved' });
      expect(await page.evaluate(`document.querySelector('[name=cf-turnstile-response]').value`)).toBe(
        'XXXX.DUMMY.TOKEN.XXXX',
      );
      expect(await page.evaluate('document.title')).toBe('token XXXX.DUMMY.TOKEN.XXXX');
      const again = await service.antibot.solveCaptcha({ detectionId: record.detectionId });
      expect(again).toEqual({
        detectionId: record.detectionId,
        type: 'turnstile',
        method: 'token',
        token: 'XXXX.DUMMY.TOKEN.XXXX',
      });
    } finally {
      await session.close();
    }
  });

  it('the always-fail key gives captchaError and a failed record; a real site key says why it cannot be solved offline', async () => {
    const { session, page, service, raw } = await open();
    try {
      const failed = rejection(driver.waitForCaptcha(raw, { timeout: 20_000 }));
      await page.goto(`${site.url}/fail`);
      const error = await failed;
      expect(isCaptchaError(error)).toBe(true);
      expect(String(error)).toMatch(/always fails/);
      const [record] = (await service.antibot.getSolvedCaptchas()).records;
      expect(record).toMatchObject({
        type: 'turnstile',
        status: 'failed',
        errorMessage: expect.stringMatching(/always fails/),
      });
      const real = rejection(driver.waitForCaptcha(raw, { timeout: 20_000 }));
      await page.goto(`${site.url}/real`);
      expect(String(await real)).toMatch(/not a test key/);
    } finally {
      await session.close();
    }
  });

  it('without solve_captcha nothing is detected until captchaEnable; reCAPTCHA test key; a fault fails the next solve', async () => {
    const { session, page, service, raw } = await open({});
    try {
      await page.goto(`${site.url}/recaptcha`);
      await new Promise((r) => setTimeout(r, 500));
      expect((await service.antibot.getSolvedCaptchas()).records).toEqual([]);
      const solved = driver.waitForCaptcha(raw, { timeout: 20_000 });
      expect(await service.antibot.captchaEnable()).toEqual({});
      expect(await solved).toMatchObject({ type: 'recaptcha', method: 'token', status: 'solved' });
      expect(await page.evaluate('document.title')).toBe('token 03AFcW');
      emulator.faults.failNextCaptcha(session.runId ?? '', 'the solver is down');
      const failed = rejection(driver.waitForCaptcha(raw, { timeout: 20_000 }));
      await page.goto(`${site.url}/checkbox`);
      expect(String(await failed)).toMatch(/the solver is down/);
      await service.antibot.captchaDisable();
      await page.goto(`${site.url}/pass`);
      await new Promise((r) => setTimeout(r, 500));
      expect((await service.antibot.getSolvedCaptchas()).records).toHaveLength(2);
      const timeout = await rejection(driver.waitForCaptcha(raw, { timeout: 300 }));
      expect(String(timeout)).toMatch(/TimeoutError: no captcha was solved within 300 ms/);
      // Off, a captcha is still solved when asked for.
      const asked = await service.antibot.solveCaptcha({ timeout: 10 });
      expect(asked).toMatchObject({ type: 'turnstile', method: 'token', token: 'XXXX.DUMMY.TOKEN.XXXX' });
      await page.goto(`${site.url}/plain`);
      const none = await rejection(service.antibot.solveCaptcha({ timeout: 1 }));
      expect(String(none)).toMatch(/ProtocolError: Antibot.solveCaptcha: no captcha was detected on this page/);
    } finally {
      await session.close();
    }
  });
});
