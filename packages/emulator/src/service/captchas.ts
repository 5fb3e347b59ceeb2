/**
 * Captcha detection and solving (`Antibot`, docs/wire.md §10, docs/decisions.md D27 and D28).
 * While on (`solve_captcha` or `captchaEnable`), each page's frames are scanned after each load
 * for the markup the widgets put in a page, which is there even when the widget's own script
 * cannot load (sessions are off the network). One captcha is solved at a time: the vendors'
 * public test keys with a token (as their vendors document them), the emulator's own test
 * widgets by the interaction they ask for, with human input; real vendors' challenges, which
 * need their servers, end in `captchaError`.
 */
import { randomUUID } from 'node:crypto';
import type { CaptchaRecord, ServiceEvent, ServiceEventParams } from 'cloud-browser';
import type { CdpClient } from '../cdp.js';
import type { Antibot } from './antibot.js';
import type { Frame } from './frames.js';
import { between, sleep } from './human.js';
import type { Targets } from './targets.js';
import { TEST_CAPTCHA_HOLD_MS } from './widgets.js';

type CaptchaType = CaptchaRecord['type'];
type Method = NonNullable<CaptchaRecord['method']>;

/** Cloudflare's public Turnstile test site keys: those that pass and those that fail. */
const TURNSTILE_PASS = ['1x00000000000000000000AA', '1x00000000000000000000BB', '3x00000000000000000000FF'];
const TURNSTILE_FAIL = ['2x00000000000000000000AB', '2x00000000000000000000BB'];
/** Cloudflare's documented dummy token for its test keys. */
const TURNSTILE_TEST_TOKEN = 'XXXX.DUMMY.TOKEN.XXXX';
/** Google's public reCAPTCHA test site key: every solve passes. */
const RECAPTCHA_TEST_KEY = '6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI';

const NEEDS_VENDOR =
  "the vendor's challenge needs the vendor's servers, which an offline session cannot reach: the emulator solves its own test widgets and the vendors' test keys (README: Captchas)";

// In the emulator's world of a frame: the captchas not seen before, each kept for the solver.
const DETECT = `(() => {
  const seen = (window.__cbSeen ??= new WeakSet());
  const kept = (window.__cbCaptchas ??= []);
  const found = [];
  const add = (el, type, siteKey, captchaUrl) => {
    if (seen.has(el)) return;
    seen.add(el);
    kept.push(el);
    found.push({ index: kept.length - 1, type, siteKey: siteKey ?? undefined, captchaUrl: captchaUrl ?? undefined });
  };
  const kinds = { checkbox: 'turnstile_checkbox', slider: 'datadome_slider', hold: 'perimeterx_hold' };
  for (const el of document.querySelectorAll('[data-cloud-browser-captcha]')) {
    const type = kinds[el.getAttribute('data-cloud-browser-captcha')];
    if (type) add(el, type);
  }
  for (const el of document.querySelectorAll('.cf-turnstile[data-sitekey]')) add(el, 'turnstile', el.getAttribute('data-sitekey'));
  for (const el of document.querySelectorAll('.g-recaptcha[data-sitekey]')) add(el, 'recaptcha', el.getAttribute('data-sitekey'));
  for (const el of document.querySelectorAll('iframe[src*="captcha-delivery.com"]')) add(el, 'datadome', undefined, el.src);
  for (const el of document.querySelectorAll('#px-captcha')) add(el, 'perimeterx_hold');
  for (const el of document.querySelectorAll('.geetest_captcha, .geetest_holder')) add(el, 'geetest');
  return { url: location.href, found };
})()`;

/** A captcha the detection script found in a frame. */
interface Hit {
  index: number;
  type: CaptchaType;
  siteKey?: string;
  captchaUrl?: string;
}

interface Detection {
  record: CaptchaRecord;
  page: string;
  frame: Frame;
  index: number;
  siteKey: string | undefined;
  settled: Promise<void>;
  settle: () => void;
  token?: string;
}

/** Tells a page's clients an event. */
export type Emit = <E extends ServiceEvent>(page: string, event: E, params: ServiceEventParams<E>) => void;

/** One session's captchas. */
export class Captchas {
  private readonly detections: Detection[] = [];
  private queue: Promise<void> = Promise.resolve();
  private readonly scanning = new Map<string, NodeJS.Timeout>();
  /** When each page's main frame last navigated: older detections belong to documents gone. */
  private readonly navigatedAt = new Map<string, number>();
  /** Why the next solve fails, set by a test through `emulator.faults`. */
  failNext: string | undefined;

  constructor(
    private readonly control: CdpClient,
    private readonly targets: Targets,
    private readonly antibotOf: (page: string) => Antibot,
    private readonly emit: Emit,
    public enabled: boolean,
  ) {
    const loaded = (_: unknown, session: string | undefined) => {
      const page = session === undefined ? undefined : this.targets.pageOf(session)?.session;
      if (page && this.enabled) this.scanSoon(page);
    };
    control.on('Page.frameNavigated', (params, session) => {
      const frame = params.frame as { parentId?: string };
      if (session !== undefined && frame.parentId === undefined && this.targets.pageOf(session)?.session === session) {
        this.navigatedAt.set(session, Date.now());
      }
    });
    control.on('Page.loadEventFired', loaded);
    control.on('Page.frameStoppedLoading', loaded);
  }

  /** The records, oldest first. */
  records(): CaptchaRecord[] {
    return this.detections.map((d) => ({ ...d.record }));
  }

  /** Turn detection on and look at every page now. */
  enable(pages: readonly string[]): void {
    this.enabled = true;
    for (const page of pages) this.scanSoon(page);
  }

  private scanSoon(page: string): void {
    clearTimeout(this.scanning.get(page));
    this.scanning.set(
      page,
      setTimeout(() => {
        this.scanning.delete(page);
        void this.scan(page).catch(() => {});
      }, 50),
    );
  }

  /** Look for captchas not seen before in every frame of `page`; each is queued to be solved. */
  async scan(page: string): Promise<Detection[]> {
    const antibot = this.antibotOf(page);
    const found: Detection[] = [];
    for (const frame of await antibot.frames.list()) {
      const contextId = await antibot.frames.world(frame).catch(() => undefined);
      if (contextId === undefined) continue;
      const { result } = await this.control.send<{
        result: { value?: { url: string; found: Hit[] } };
      }>('Runtime.evaluate', { expression: DETECT, contextId, returnByValue: true }, frame.session);
      // The frame may have navigated since it was listed: the document's own address is the one seen.
      const seenIn = result.value ? { ...frame, url: result.value.url } : frame;
      for (const hit of result.value?.found ?? []) found.push(this.detected(page, seenIn, hit));
    }
    return found;
  }

  private detected(page: string, frame: Frame, hit: Hit): Detection {
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const record: CaptchaRecord = {
      detectionId: randomUUID(),
      type: hit.type,
      frameUrl: frame.url,
      status: 'pending',
      detectedAt: Date.now(),
    };
    const detection = { record, page, frame, index: hit.index, siteKey: hit.siteKey, settled, settle };
    this.detections.push(detection);
    this.emit(page, 'Antibot.captchaDetected', {
      detectionId: record.detectionId,
      type: record.type,
      frameUrl: record.frameUrl,
      ...(hit.siteKey ? { siteKey: hit.siteKey } : {}),
      ...(hit.captchaUrl ? { captchaUrl: hit.captchaUrl } : {}),
    });
    this.queue = this.queue.then(() => this.solve(detection));
    return detection;
  }

  /**
   * `solveCaptcha`: the detection named, else the first not yet settled on `page` (looking again
   * first); resolves when it is settled, with the record.
   */
  async solveOn(page: string, detectionId: string | undefined, timeoutS: number): Promise<Detection> {
    let detection =
      detectionId === undefined ? undefined : this.detections.find((d) => d.record.detectionId === detectionId);
    if (detectionId !== undefined && !detection) throw new Error(`no captcha was detected with the id ${detectionId}`);
    if (!detection) {
      const fresh = await this.scan(page);
      const since = this.navigatedAt.get(page) ?? 0;
      const current = this.detections.filter((d) => d.page === page && d.record.detectedAt >= since);
      detection = fresh[0] ?? current.find((d) => d.record.status === 'pending') ?? current.at(-1);
    }
    if (!detection) throw new Error('no captcha was detected on this page');
    const timer = new Promise<'timeout'>((resolve) => setTimeout(resolve, timeoutS * 1000, 'timeout').unref());
    if ((await Promise.race([detection.settled, timer])) === 'timeout') {
      throw new Error(`the captcha ${detection.record.detectionId} was not solved within ${timeoutS} s`);
    }
    return detection;
  }

  /** How a detection is solved. */
  private methodOf(d: Detection): Method {
    const methods: Partial<Record<CaptchaType, Method>> = {
      turnstile_checkbox: 'checkbox',
      datadome_slider: 'slider',
      perimeterx_hold: 'hold',
    };
    return methods[d.record.type] ?? 'token';
  }

  private async solve(d: Detection): Promise<void> {
    const method = this.methodOf(d);
    const { detectionId, type } = d.record;
    this.emit(d.page, 'Antibot.captchaSolvingStarted', { detectionId, type, method });
    try {
      if (this.failNext !== undefined) {
        const why = this.failNext;
        this.failNext = undefined;
        throw new Error(why);
      }
      const token = method === 'token' ? await this.solveWithToken(d) : await this.solveByHand(d, method);
      Object.assign(d.record, { status: 'solved', method, resolvedAt: Date.now() });
      this.emit(d.page, 'Antibot.captchaSolved', { detectionId, type, method, ...(token ? { token } : {}) });
      if (token) d.token = token;
    } catch (error) {
      const errorMessage = (error as Error).message;
      Object.assign(d.record, { status: 'failed', method, resolvedAt: Date.now(), errorMessage });
      this.emit(d.page, 'Antibot.captchaError', { detectionId, type, errorMessage });
    } finally {
      d.settle();
    }
  }

  /** A test key's token, put where the widget would put it, and the page's callback called. */
  private async solveWithToken(d: Detection): Promise<string> {
    const key = d.siteKey ?? '';
    let token: string;
    let field: string;
    if (d.record.type === 'turnstile' && TURNSTILE_PASS.includes(key)) {
      [token, field] = [TURNSTILE_TEST_TOKEN, 'cf-turnstile-response'];
    } else if (d.record.type === 'turnstile' && TURNSTILE_FAIL.includes(key)) {
      await sleep(between(300, 600));
      throw new Error(`the Turnstile test key ${key} always fails`);
    } else if (d.record.type === 'recaptcha' && key === RECAPTCHA_TEST_KEY) {
      [token, field] = [`03AFcWeA-cloud-browser-test-${randomUUID()}`, 'g-recaptcha-response'];
    } else if (d.record.type === 'turnstile' || d.record.type === 'recaptcha') {
      throw new Error(`the site key ${key} is not a test key; ${NEEDS_VENDOR}`);
    } else {
      throw new Error(NEEDS_VENDOR);
    }
    await sleep(between(300, 600));
    await this.deliverToken(d, token, field);
    return token;
  }

  /** The token in the widget's hidden field (made when the widget's script did not), then its `data-callback`. */
  private async deliverToken(d: Detection, token: string, field: string): Promise<void> {
    const element = await this.element(d, false);
    await this.control.send(
      'Runtime.callFunctionOn',
      {
        objectId: element,
        functionDeclaration: `function (token, field) {
          let input = this.querySelector('[name="' + field + '"]') ?? (this.closest('form') ?? document).querySelector('[name="' + field + '"]');
          if (!input) {
            input = document.createElement(field === 'g-recaptcha-response' ? 'textarea' : 'input');
            if (input.tagName === 'INPUT') input.type = 'hidden'; else input.style.display = 'none';
            input.name = field;
            if (field === 'g-recaptcha-response') input.id = field;
            this.appendChild(input);
          }
          input.value = token;
          const name = this.getAttribute('data-callback');
          const callback = name ? name.split('.').reduce((o, k) => (o == null ? undefined : o[k]), window) : undefined;
          if (typeof callback === 'function') callback(token);
        }`,
        arguments: [{ value: token }, { value: field }],
      },
      d.frame.session,
    );
  }

  /** The widget's element: in the emulator's world (`isolated`), or in the page's own, to call its functions. */
  private async element(d: Detection, isolated: boolean): Promise<string> {
    const frames = this.antibotOf(d.page).frames;
    const contextId = await frames.world(d.frame);
    const { result } = await this.control.send<{ result: { objectId?: string } }>(
      'Runtime.evaluate',
      { expression: `window.__cbCaptchas?.[${d.index}]`, contextId },
      d.frame.session,
    );
    if (!result.objectId) throw new Error('the captcha is no longer on the page');
    if (isolated) return result.objectId;
    const { node } = await this.control.send<{ node: { backendNodeId: number } }>(
      'DOM.describeNode',
      { objectId: result.objectId },
      d.frame.session,
    );
    const { object } = await this.control.send<{ object: { objectId: string } }>(
      'DOM.resolveNode',
      { backendNodeId: node.backendNodeId },
      d.frame.session,
    );
    return object.objectId;
  }

  /** The interaction a test widget asks for, with human input; solved when the widget says so. */
  private async solveByHand(d: Detection, method: Method): Promise<void> {
    const antibot = this.antibotOf(d.page);
    const root = await this.element(d, true);
    const part = async (selector: string) => {
      const { result } = await this.control.send<{ result: { objectId?: string; subtype?: string } }>(
        'Runtime.callFunctionOn',
        {
          objectId: root,
          functionDeclaration: `function (s) { return this.querySelector(s); }`,
          arguments: [{ value: selector }],
        },
        d.frame.session,
      );
      if (!result.objectId || result.subtype === 'null') throw new Error(NEEDS_VENDOR);
      return antibot.boxOf({ frame: d.frame, objectId: result.objectId });
    };
    const target = await part('.cb-captcha-target');
    const middle = { x: target.x + target.width * between(0.4, 0.6), y: target.y + target.height * between(0.4, 0.6) };
    await antibot.input.moveTo(middle);
    await sleep(between(80, 200));
    if (method === 'checkbox') await antibot.input.click();
    else if (method === 'hold') {
      await antibot.input.press();
      await sleep(TEST_CAPTCHA_HOLD_MS + between(300, 800));
      await antibot.input.release();
    } else {
      const track = await part('.cb-captcha-track');
      await antibot.input.press();
      await sleep(between(100, 180));
      const end = { x: track.x + track.width - target.width / 2 + between(2, 6), y: middle.y };
      await antibot.input.moveTo(end, false, 0.15);
      await sleep(between(60, 140));
      await antibot.input.release();
    }
    await this.verdict(d, root);
  }

  /** Wait for the widget to say whether it accepted the interaction. */
  private async verdict(d: Detection, root: string): Promise<void> {
    for (let i = 0; i < 30; i++) {
      const { result } = await this.control.send<{ result: { value?: { state: string; reason: string } } }>(
        'Runtime.callFunctionOn',
        {
          objectId: root,
          functionDeclaration: `function () { return { state: this.getAttribute('data-state') ?? '', reason: this.getAttribute('data-reason') ?? '' }; }`,
          returnByValue: true,
        },
        d.frame.session,
      );
      const state = result.value;
      if (state?.state === 'solved') return;
      if (state?.state === 'rejected') throw new Error(`the widget refused the interaction: ${state.reason}`);
      await sleep(100);
    }
    throw new Error('the widget gave no answer to the interaction');
  }
}
