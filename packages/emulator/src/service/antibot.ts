/**
 * The `Antibot` domain's input commands on one page (docs/wire.md §10): each target found in any
 * frame, brought into view with the wheel, and reached with human input. A target that is
 * missing, hidden or unreachable answers `success: false` with the reason, never a protocol error.
 */
import type { AntibotSelector, ServiceCommand, ServiceParams } from 'cloud-browser';
import type { CdpClient } from '../cdp.js';
import { type Box, type Found, type Frame, matchesRole, PageFrames, Unreachable } from './frames.js';
import { type Button, between, HumanInput, KEY_NAMES, type Point, sleep } from './human.js';
import type { Targets } from './targets.js';

/** Words a minute when `wpm` is left out: a quick typist (docs/decisions.md D28). */
export const DEFAULT_WPM = 120;
/** Milliseconds `clickAndHold` holds when `holdTime` is left out. */
export const DEFAULT_HOLD_MS = 3000;
/** Milliseconds `waitForElement` waits when `timeout` is left out. */
export const DEFAULT_WAIT_MS = 10_000;

/** Parameters a command cannot take, as a protocol error (Chromium's -32602). */
export class BadParams extends Error {}

type Result = Record<string, unknown>;
type Relative = { x: number; y: number } | undefined;

const describe = (s: AntibotSelector) => `${s.type} ${JSON.stringify(s.query)}`;

// A cursor drawn over the page, following the mouse, never in the way of a click.
const CURSOR = `(() => {
  if (window.__cloudBrowserCursor) return;
  window.__cloudBrowserCursor = true;
  const draw = () => {
    const dot = document.createElement('div');
    dot.setAttribute('aria-hidden', 'true');
    dot.style.cssText = 'position:fixed;left:0;top:0;width:14px;height:14px;margin:-7px 0 0 -7px;border-radius:50%;background:rgba(255,64,64,.7);border:2px solid #fff;box-shadow:0 0 3px #000;pointer-events:none;z-index:2147483647;transition:none';
    document.documentElement.appendChild(dot);
    addEventListener('mousemove', (e) => { dot.style.transform = 'translate(' + e.clientX + 'px,' + e.clientY + 'px)'; }, { capture: true, passive: true });
  };
  if (document.documentElement) draw(); else addEventListener('DOMContentLoaded', draw);
})()`;

// Run on a <select> or a custom dropdown's option list; picks by value, text or index.
const PICK = `function (value, text, index) {
  if (this.tagName !== 'SELECT') return null;
  const options = [...this.options];
  const option = value !== undefined ? options.find((o) => o.value === value)
    : text !== undefined ? options.find((o) => o.text.trim() === text.trim())
    : options[index ?? 0];
  if (!option) return { missing: true };
  this.focus();
  this.value = option.value;
  this.dispatchEvent(new Event('input', { bubbles: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  return { value: option.value, text: option.text };
}`;

// Run on a custom dropdown's root: its option by value, text or index, among what is visible.
const CUSTOM_OPTION = `function (value, text, index) {
  const root = this.ownerDocument;
  const all = [...root.querySelectorAll('[role=option], [role=menuitem], li, [data-value]')].filter((el) => el.getClientRects().length > 0);
  const valueOf = (el) => el.getAttribute('data-value') ?? el.getAttribute('value') ?? el.textContent.trim();
  return (value !== undefined ? all.find((el) => valueOf(el) === value)
    : text !== undefined ? all.find((el) => el.textContent.trim() === text.trim())
    : all[index ?? 0]) ?? null;
}`;

/** Human-like input and element location on one page. */
export class Antibot {
  readonly input: HumanInput;
  readonly frames: PageFrames;

  constructor(
    private readonly control: CdpClient,
    targets: Targets,
    readonly page: string,
  ) {
    this.input = new HumanInput(control, page);
    this.frames = new PageFrames(control, targets, page);
  }

  /** Carry out one `Antibot` command; `success: false` with the reason when its target cannot be reached. */
  async run<M extends ServiceCommand>(method: M, params: ServiceParams<M>): Promise<Result> {
    const name = method.slice('Antibot.'.length);
    const handler = (this as unknown as Record<string, (p: unknown) => Promise<Result>>)[`do_${name}`];
    if (!handler) throw new BadParams(`${method} is not a command of this domain`);
    try {
      return await handler.call(this, params);
    } catch (error) {
      if (error instanceof BadParams) throw error;
      const reason = error instanceof Unreachable ? error.message : `the browser refused: ${(error as Error).message}`;
      return { success: false, errorMessage: reason };
    }
  }

  /** The frames to look in: all of them, or those whose URL holds `frameUrl`. */
  private async framesFor(frameUrl?: string): Promise<Frame[]> {
    const frames = await this.frames.list();
    if (frameUrl === undefined) return frames;
    const some = frames.filter((f) => f.url === frameUrl || f.url.includes(frameUrl));
    if (some.length === 0) throw new Unreachable(`no frame's URL holds ${JSON.stringify(frameUrl)}`);
    return some;
  }

  /** The element a selector names, seen by a person: found, visible, in view. */
  async reach(selector: AntibotSelector, frameUrl?: string): Promise<{ found: Found; box: Box }> {
    const found = await this.frames.find(selector, await this.framesFor(frameUrl));
    if (!found) throw new Unreachable(`no element matches ${describe(selector)}`);
    const hidden = await this.frames.hiddenReason(found);
    if (hidden) throw new Unreachable(`the element ${describe(selector)} cannot be seen: ${hidden}`);
    return { found, box: await this.intoView(found) };
  }

  /** The point to aim at for `selector`: inside its box, or a `coord` selector's own point. */
  async pointOf(selector: AntibotSelector, relative?: Relative, frameUrl?: string): Promise<Point> {
    if (selector.type === 'coord') {
      const [x, y] = selector.query.split(',').map((n) => Number(n.trim()));
      if (!Number.isFinite(x) || !Number.isFinite(y))
        throw new BadParams(`selector.query: expected "x,y", got ${JSON.stringify(selector.query)}`);
      return { x: x as number, y: y as number };
    }
    if (selector.type === 'bottom') throw new BadParams('selector.type: "bottom" is for Antibot.scroll only');
    const { box } = await this.reach(selector, frameUrl);
    return pointIn(box, relative);
  }

  /** An element's box once it is in view. */
  boxOf(found: Found): Promise<Box> {
    return this.intoView(found);
  }

  /** Turn the wheel until the element's middle is in the viewport; its box then. */
  private async intoView(found: Found): Promise<Box> {
    let box = await this.frames.box(found);
    const { cssLayoutViewport: view } = await this.control.send<{
      cssLayoutViewport: { clientWidth: number; clientHeight: number };
    }>('Page.getLayoutMetrics', {}, this.page);
    const h = view.clientHeight;
    for (let notch = 0; notch < 80; notch++) {
      // All of it in view, or its middle when it is taller than the window.
      const fits =
        box.height <= h
          ? box.y >= 0 && box.y + box.height <= h
          : box.y + box.height / 2 >= 0 && box.y + box.height / 2 < h;
      if (fits) break;
      const middle = box.y + box.height / 2;
      const distance = middle < 0 ? middle - h / 3 : middle - (h * 2) / 3;
      await this.input.wheel(Math.sign(distance) * Math.min(Math.abs(distance), between(90, 120)));
      await sleep(between(25, 45));
      box = await this.settled(found, box);
    }
    // Only the part a person sees can be aimed at (a box wider than the window, or half off it).
    const left = Math.max(box.x, 0);
    const top = Math.max(box.y, 0);
    const right = Math.min(box.x + box.width, view.clientWidth);
    const bottom = Math.min(box.y + box.height, view.clientHeight);
    if (right <= left || bottom <= top)
      throw new Unreachable('it is outside the window, and the wheel did not bring it in');
    return { x: left, y: top, width: right - left, height: bottom - top };
  }

  /** The box once the page has stopped scrolling (a wheel's scroll lands a little later under load). */
  private async settled(found: Found, before: Box): Promise<Box> {
    let last = before;
    for (let i = 0; i < 10; i++) {
      const now = await this.frames.box(found);
      if (now.y === last.y && now.x === last.x && i > 0) return now;
      last = now;
      await sleep(30);
    }
    return last;
  }

  private async aimAndClick(p: Point, button: Button = 'left', clickCount = 1, duration?: number): Promise<void> {
    await this.input.moveTo(p);
    await sleep(between(30, 90));
    await this.input.click(button, clickCount, duration);
  }

  async do_moveTo(p: ServiceParams<'Antibot.moveTo'>): Promise<Result> {
    const at = await this.pointOf(p.selector, p.relativePosition);
    const offset = p.absoluteOffset ?? { x: 0, y: 0 };
    await this.input.moveTo({ x: at.x + offset.x, y: at.y + offset.y }, p.steady === true);
    return { success: true };
  }

  async do_clickOn(p: ServiceParams<'Antibot.clickOn'>): Promise<Result> {
    await this.aimAndClick(await this.pointOf(p.selector, p.relativePosition), p.button, p.clickCount, p.clickDuration);
    return { success: true };
  }

  async do_hover(p: ServiceParams<'Antibot.hover'>): Promise<Result> {
    await this.input.moveTo(await this.pointOf(p.selector, p.relativePosition));
    await sleep(p.holdTime ?? between(300, 600));
    return { success: true };
  }

  async do_dragAndDrop(p: ServiceParams<'Antibot.dragAndDrop'>): Promise<Result> {
    await this.input.moveTo(await this.pointOf(p.from, p.fromRelativePosition));
    await this.input.press();
    await sleep(between(120, 220));
    await this.input.moveTo(await this.pointOf(p.to, p.toRelativePosition));
    await sleep(between(80, 160));
    await this.input.release();
    return { success: true };
  }

  async do_clickAndHold(p: ServiceParams<'Antibot.clickAndHold'>): Promise<Result> {
    await this.input.moveTo(await this.pointOf(p.selector, p.relativePosition, p.frameUrl));
    await sleep(between(40, 100));
    await this.input.press(p.button);
    await sleep(p.holdTime ?? DEFAULT_HOLD_MS);
    await this.input.release(p.button);
    return { success: true };
  }

  async do_clickAndSlide(p: ServiceParams<'Antibot.clickAndSlide'>): Promise<Result> {
    if (p.distance === undefined && p.target === undefined) {
      throw new BadParams('distance: give distance (pixels) or target (a selector) to slide to');
    }
    const start = await this.pointOf(p.selector, p.relativePosition, p.frameUrl);
    const end = p.target
      ? await this.pointOf(p.target, p.targetRelativePosition, p.frameUrl)
      : { x: start.x + (p.distance as number), y: start.y };
    end.y += p.verticalOffset ?? 0;
    await this.input.moveTo(start);
    await sleep(between(60, 120));
    await this.input.press(p.button);
    await sleep(between(100, 180));
    if (p.overshoot) {
      const past = Math.sign(end.x - start.x || 1) * between(8, 18);
      await this.input.moveTo({ x: end.x + past, y: end.y }, false, 0.15);
      await sleep(between(80, 150));
    }
    await this.input.moveTo(end, false, 0.15);
    await sleep(between(60, 140));
    await this.input.release(p.button);
    return { success: true };
  }

  async do_scroll(p: ServiceParams<'Antibot.scroll'>): Promise<Result> {
    if (p.selector?.type === 'bottom' || (p.selector === undefined && p.delta === undefined)) {
      for (let notch = 0; notch < 400 && !(await this.atBottom()); notch++) {
        await this.input.wheel(between(90, 120));
        await sleep(between(25, 45));
      }
    } else if (p.selector) {
      await this.reach(p.selector);
    } else if (p.delta !== undefined) {
      let left = p.delta;
      while (Math.abs(left) > 0.5) {
        const step = Math.sign(left) * Math.min(Math.abs(left), between(90, 120));
        await this.input.wheel(step);
        left -= step;
        await sleep(between(25, 45));
      }
    }
    // The wheel's scrolls land a little after the notches under load: wait for the page to stand still.
    let last = Number.NaN;
    for (let i = 0; i < 20; i++) {
      const { result } = await this.control.send<{ result: { value?: number } }>(
        'Runtime.evaluate',
        { expression: 'scrollY', returnByValue: true },
        this.page,
      );
      if (result.value === last) break;
      last = result.value ?? 0;
      await sleep(40);
    }
    return { success: true, atBottom: await this.atBottom() };
  }

  private async atBottom(): Promise<boolean> {
    const { result } = await this.control.send<{ result: { value?: boolean } }>(
      'Runtime.evaluate',
      {
        expression: 'Math.ceil(scrollY + innerHeight) >= document.documentElement.scrollHeight - 2',
        returnByValue: true,
      },
      this.page,
    );
    return result.value === true;
  }

  async do_typeText(p: ServiceParams<'Antibot.typeText'>): Promise<Result> {
    await this.input.type(p.text, p.wpm ?? DEFAULT_WPM);
    return { success: true };
  }

  async do_fill(p: ServiceParams<'Antibot.fill'>): Promise<Result> {
    await this.aimAndClick(await this.pointOf(p.selector, p.relativePosition));
    await sleep(between(80, 160));
    if (p.clear) {
      await this.input.selectAll();
      await this.input.key('Backspace');
    }
    if (p.paste) await this.input.paste(p.text);
    else await this.input.type(p.text, p.wpm ?? DEFAULT_WPM);
    return { success: true };
  }

  async do_pressKey(p: ServiceParams<'Antibot.pressKey'>): Promise<Result> {
    if ([...p.key].length !== 1 && !KEY_NAMES.includes(p.key)) {
      return {
        success: false,
        errorMessage: `unknown key ${JSON.stringify(p.key)}: one character or one of ${KEY_NAMES.join(', ')}`,
      };
    }
    await this.input.key(p.key);
    return { success: true };
  }

  async do_selectOption(p: ServiceParams<'Antibot.selectOption'>): Promise<Result> {
    const { found, box } = await this.reach(p.selector);
    const args = [{ value: p.value }, { value: p.text }, { value: p.index }];
    const native = await this.callOn<{ value: string; text: string; missing?: true } | null>(found, PICK, args);
    if (native) {
      await this.input.moveTo(pointIn(box));
      if (native.missing) return { success: false, errorMessage: 'no option of the <select> matches' };
      return { success: true, selectedValue: native.value, selectedText: native.text };
    }
    await this.aimAndClick(pointIn(box));
    await sleep(between(150, 250));
    const option = p.optionSelector ? (await this.reach(p.optionSelector)).found : await this.customOption(found, args);
    const optionBox = await this.intoView(option);
    const picked = await this.callOn<{ value: string; text: string }>(
      option,
      `function () { return { value: this.getAttribute('data-value') ?? this.getAttribute('value') ?? this.textContent.trim(), text: this.textContent.trim() }; }`,
      [],
    );
    await this.aimAndClick(pointIn(optionBox));
    return { success: true, selectedValue: picked.value, selectedText: picked.text };
  }

  private async customOption(root: Found, args: { value: unknown }[]): Promise<Found> {
    const { result } = await this.control.send<{ result: { objectId?: string; subtype?: string } }>(
      'Runtime.callFunctionOn',
      { functionDeclaration: CUSTOM_OPTION, objectId: root.objectId, arguments: args },
      root.frame.session,
    );
    if (!result.objectId || result.subtype === 'null') throw new Unreachable('no option of the dropdown matches');
    return { frame: root.frame, objectId: result.objectId };
  }

  private async callOn<T>(found: Found, fn: string, args: { value: unknown }[]): Promise<T> {
    const { result } = await this.control.send<{ result: { value: T } }>(
      'Runtime.callFunctionOn',
      { functionDeclaration: fn, objectId: found.objectId, arguments: args, returnByValue: true },
      found.frame.session,
    );
    return result.value;
  }

  async do_showCursor(): Promise<Result> {
    await this.control.send('Page.addScriptToEvaluateOnNewDocument', { source: CURSOR }, this.page);
    await this.control.send('Runtime.evaluate', { expression: CURSOR }, this.page);
    return { success: true };
  }

  async do_getFrames(): Promise<Result> {
    const frames = await this.frames.list();
    return { frames: frames.map(({ session: _s, parentId: _p, ...info }) => info) };
  }

  private async located(selector: AntibotSelector, frames: Frame[], relative?: Relative): Promise<Result> {
    const found = await this.frames.find(selector, frames);
    if (!found) return { success: false, errorMessage: `no element matches ${describe(selector)}` };
    const box = await this.frames.box(found);
    const point = pointIn(box, relative ?? { x: 0.5, y: 0.5 });
    return {
      success: true,
      pointX: point.x,
      pointY: point.y,
      boundsX: box.x,
      boundsY: box.y,
      boundsWidth: box.width,
      boundsHeight: box.height,
    };
  }

  async do_locateElement(p: ServiceParams<'Antibot.locateElement'>): Promise<Result> {
    const frame = (await this.frames.list()).find((f) => f.frameId === p.frameId);
    if (!frame) return { success: false, errorMessage: `no frame ${p.frameId} on this page` };
    return this.located(p.selector, [frame], p.relativePosition);
  }

  async do_locateElementAcrossFrames(p: ServiceParams<'Antibot.locateElementAcrossFrames'>): Promise<Result> {
    return this.located(p.selector, await this.frames.list(), p.relativePosition);
  }

  async do_waitForElement(p: ServiceParams<'Antibot.waitForElement'>): Promise<Result> {
    const timeout = p.timeout ?? DEFAULT_WAIT_MS;
    const deadline = Date.now() + timeout;
    for (;;) {
      const found = await this.frames.find(p.selector, await this.frames.list()).catch((e) => {
        if (e instanceof Unreachable) throw e;
        return undefined;
      });
      if (found && (!p.visible || !(await this.frames.hiddenReason(found)))) {
        return { success: true, frameId: found.frame.frameId };
      }
      if (Date.now() >= deadline) {
        const what = p.visible ? 'a visible element' : 'an element';
        return { success: false, errorMessage: `no ${what} matched ${describe(p.selector)} within ${timeout} ms` };
      }
      await sleep(100);
    }
  }

  async do_isElementVisible(p: ServiceParams<'Antibot.isElementVisible'>): Promise<Result> {
    if (p.selector.type !== 'css' && p.selector.type !== 'xpath') {
      throw new BadParams(
        `selector.type: isElementVisible takes "css" or "xpath", got ${JSON.stringify(p.selector.type)}`,
      );
    }
    const found = await this.frames.find(p.selector, await this.frames.list());
    if (!found) return { visible: false, exists: false, reason: `no element matches ${describe(p.selector)}` };
    const hidden = await this.frames.hiddenReason(found);
    return hidden ? { visible: false, exists: true, reason: hidden } : { visible: true, exists: true };
  }

  async do_getMousePosition(): Promise<Result> {
    return { success: true, x: this.input.position.x, y: this.input.position.y };
  }

  async do_performAction(p: ServiceParams<'Antibot.performAction'>): Promise<Result> {
    const frames = (await this.frames.list()).filter((f) => p.frameId === undefined || f.frameId === p.frameId);
    for (const frame of frames) {
      const node = await this.frames.axNode(frame, (n) => n.nodeId === p.axNodeId);
      if (node?.backendDOMNodeId === undefined) continue;
      const objectId = await this.frames.resolve(frame, node.backendDOMNodeId);
      if (objectId) return this.act({ frame, objectId }, p.action, p.metadata);
    }
    return { success: false, errorMessage: `no accessibility node ${p.axNodeId} on this page` };
  }

  async do_findAndPerformAction(p: ServiceParams<'Antibot.findAndPerformAction'>): Promise<Result> {
    if (p.selector.type !== 'role' && p.selector.type !== 'axNodeId') {
      throw new BadParams(
        `selector.type: findAndPerformAction takes "role" or "axNodeId", got ${JSON.stringify(p.selector.type)}`,
      );
    }
    const query =
      p.selector.type === 'role' && p.name !== undefined
        ? `${p.selector.query.split('|')[0]}|${p.name}`
        : p.selector.query;
    const selector = { type: p.selector.type, query };
    for (const frame of await this.framesFor(p.frameUrl)) {
      const node = await this.frames.axNode(frame, (n) =>
        selector.type === 'axNodeId' ? n.nodeId === query : matchesRole(n, query),
      );
      if (node?.backendDOMNodeId === undefined) continue;
      const objectId = await this.frames.resolve(frame, node.backendDOMNodeId);
      if (!objectId) continue;
      const done = await this.act({ frame, objectId }, p.action);
      return {
        ...done,
        foundNodeId: node.nodeId,
        foundRole: node.role?.value ?? '',
        foundName: node.name?.value ?? '',
      };
    }
    return { success: false, errorMessage: `no accessibility node matches ${describe(selector)}` };
  }

  /** An accessibility action on a found node, with human input where a person would use it. */
  private async act(found: Found, action: string, metadata?: Record<string, string>): Promise<Result> {
    const box = async () => pointIn(await this.intoView(found));
    switch (action) {
      case 'click':
      case 'press':
        await this.aimAndClick(await box());
        return { success: true };
      case 'doubleClick':
        await this.aimAndClick(await box(), 'left', 2);
        return { success: true };
      case 'rightClick':
        await this.aimAndClick(await box(), 'right');
        return { success: true };
      case 'hover':
        await this.input.moveTo(await box());
        return { success: true };
      case 'focus':
        await this.callOn(found, 'function () { this.focus(); }', []);
        return { success: true };
      case 'scrollIntoView':
        await this.intoView(found);
        return { success: true };
      case 'type':
      case 'fill':
        await this.aimAndClick(await box());
        await this.input.type(metadata?.text ?? metadata?.value ?? '', DEFAULT_WPM);
        return { success: true };
      default:
        return {
          success: false,
          errorMessage: `unknown action ${JSON.stringify(action)}: one of click, doubleClick, rightClick, hover, focus, scrollIntoView, type`,
        };
    }
  }

  async do_disable(): Promise<Result> {
    return {};
  }
}

/** A point in `box`: at `relative` (fractions), else near its middle, as a person aims. */
export function pointIn(box: Box, relative?: Relative): Point {
  const r = relative ?? { x: between(0.35, 0.65), y: between(0.35, 0.65) };
  return { x: box.x + box.width * r.x, y: box.y + box.height * r.y };
}
