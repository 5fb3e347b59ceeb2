/**
 * Input as a person makes it, on one page, through standard `Input.dispatch*`: the mouse travels
 * along a curved path (a cubic Bézier bent to one side, eased, with a little jitter) in many
 * small moves, presses last a human time, keys arrive one by one at a words-per-minute pace,
 * the wheel scrolls in notches. What a page can observe is what a person's input gives it.
 */
import type { CdpClient } from '../cdp.js';

export type Button = 'left' | 'right' | 'middle';
export interface Point {
  x: number;
  y: number;
}

const BUTTON_BITS: Record<Button, number> = { left: 1, right: 2, middle: 4 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A value in [min, max). */
const between = (min: number, max: number) => min + Math.random() * (max - min);

/** Named keys as `Input.dispatchKeyEvent` takes them. */
const KEYS: Record<string, { code: string; keyCode: number; text?: string }> = {
  Enter: { code: 'Enter', keyCode: 13, text: '\r' },
  Tab: { code: 'Tab', keyCode: 9 },
  Escape: { code: 'Escape', keyCode: 27 },
  Backspace: { code: 'Backspace', keyCode: 8 },
  Delete: { code: 'Delete', keyCode: 46 },
  ArrowUp: { code: 'ArrowUp', keyCode: 38 },
  ArrowDown: { code: 'ArrowDown', keyCode: 40 },
  ArrowLeft: { code: 'ArrowLeft', keyCode: 37 },
  ArrowRight: { code: 'ArrowRight', keyCode: 39 },
  Home: { code: 'Home', keyCode: 36 },
  End: { code: 'End', keyCode: 35 },
  PageUp: { code: 'PageUp', keyCode: 33 },
  PageDown: { code: 'PageDown', keyCode: 34 },
  Space: { code: 'Space', keyCode: 32, text: ' ' },
  ' ': { code: 'Space', keyCode: 32, text: ' ' },
};

/** The names `pressKey` takes beyond single characters. */
export const KEY_NAMES = Object.keys(KEYS).filter((k) => k !== ' ');

/** The `code` and key code of a printable character on a US keyboard, when it has one. */
function codeOf(ch: string): { code: string; keyCode: number } | undefined {
  if (/^[a-z]$/i.test(ch)) return { code: `Key${ch.toUpperCase()}`, keyCode: ch.toUpperCase().charCodeAt(0) };
  if (/^[0-9]$/.test(ch)) return { code: `Digit${ch}`, keyCode: ch.charCodeAt(0) };
  return undefined;
}

/** The mouse and keyboard of one page. */
export class HumanInput {
  /** Where the pointer is, in main-frame CSS pixels. */
  position: Point;
  private pressed = 0;

  constructor(
    private readonly control: CdpClient,
    private readonly page: string,
    /** Milliseconds between mouse moves, at most. */
    private readonly stepMs = 12,
  ) {
    this.position = { x: Math.round(between(20, 120)), y: Math.round(between(20, 120)) };
  }

  private mouse(type: string, at: Point, extra: Record<string, unknown> = {}): Promise<unknown> {
    return this.control.send(
      'Input.dispatchMouseEvent',
      { type, x: at.x, y: at.y, buttons: this.pressed, pointerType: 'mouse', ...extra },
      this.page,
    );
  }

  /**
   * Move along a curve to `to`: at least a dozen moves (more for longer ways), eased in and out,
   * bent to one side by up to a fifth of the distance (times `bend`); `steady` keeps the jitter off.
   */
  async moveTo(to: Point, steady = false, bend = 1): Promise<void> {
    const from = this.position;
    const dx = to.x - from.x;
    const dy = to.y - from.y;
    const distance = Math.hypot(dx, dy);
    const steps = Math.max(14, Math.min(60, Math.round(distance / 10)));
    const side = Math.random() < 0.5 ? -1 : 1;
    const sway = side * distance * between(0.08, 0.2) * bend;
    const nx = distance === 0 ? 0 : -dy / distance;
    const ny = distance === 0 ? 0 : dx / distance;
    const c1 = { x: from.x + dx * 0.3 + nx * sway, y: from.y + dy * 0.3 + ny * sway };
    const c2 = { x: from.x + dx * 0.7 + nx * sway * 0.6, y: from.y + dy * 0.7 + ny * sway * 0.6 };
    for (let i = 1; i <= steps; i++) {
      const linear = i / steps;
      const t = linear < 0.5 ? 2 * linear * linear : 1 - (-2 * linear + 2) ** 2 / 2;
      const u = 1 - t;
      const jitter = steady || i === steps ? 0 : between(-0.6, 0.6);
      const point = {
        x: u ** 3 * from.x + 3 * u * u * t * c1.x + 3 * u * t * t * c2.x + t ** 3 * to.x + jitter,
        y: u ** 3 * from.y + 3 * u * u * t * c1.y + 3 * u * t * t * c2.y + t ** 3 * to.y + jitter,
      };
      await this.mouse('mouseMoved', point);
      this.position = point;
      await sleep(between(this.stepMs / 2, this.stepMs));
    }
    this.position = to;
  }

  async press(button: Button = 'left', clickCount = 1): Promise<void> {
    this.pressed |= BUTTON_BITS[button];
    await this.mouse('mousePressed', this.position, { button, clickCount });
  }

  async release(button: Button = 'left', clickCount = 1): Promise<void> {
    this.pressed &= ~BUTTON_BITS[button];
    await this.mouse('mouseReleased', this.position, { button, clickCount });
  }

  /** Press and release where the pointer is, `clickCount` times, each press `duration` ms (human when left out). */
  async click(button: Button = 'left', clickCount = 1, duration?: number): Promise<void> {
    for (let n = 1; n <= clickCount; n++) {
      await this.press(button, n);
      await sleep(duration ?? between(60, 140));
      await this.release(button, n);
      if (n < clickCount) await sleep(between(70, 120));
    }
  }

  /** Turn the wheel where the pointer is, by `deltaY` pixels in one notch. */
  async wheel(deltaY: number): Promise<void> {
    await this.mouse('mouseWheel', this.position, { deltaX: 0, deltaY });
  }

  /** One key: a named key (`Enter`, `ArrowDown`…) or a character. */
  async key(name: string): Promise<void> {
    const named = KEYS[name];
    if (named) {
      const base = { key: name === ' ' ? ' ' : name, code: named.code, windowsVirtualKeyCode: named.keyCode };
      await this.keyEvent(named.text ? 'keyDown' : 'rawKeyDown', {
        ...base,
        ...(named.text ? { text: named.text } : {}),
      });
      await sleep(between(30, 70));
      await this.keyEvent('keyUp', base);
      return;
    }
    const code = codeOf(name);
    if ([...name].length !== 1) throw new RangeError(`unknown key ${JSON.stringify(name)}`);
    if (name.length !== 1) {
      // Beyond one UTF-16 unit (an emoji): typed as an input method would.
      await this.control.send('Input.insertText', { text: name }, this.page);
      return;
    }
    const base = { key: name, ...(code ? { code: code.code, windowsVirtualKeyCode: code.keyCode } : {}) };
    await this.keyEvent('keyDown', { ...base, text: name, unmodifiedText: name });
    await sleep(between(25, 60));
    await this.keyEvent('keyUp', base);
  }

  /** Select everything in the focused field (Ctrl+A), as a person clearing it would first. */
  async selectAll(): Promise<void> {
    const base = { key: 'a', code: 'KeyA', windowsVirtualKeyCode: 65, modifiers: 2 };
    await this.keyEvent('rawKeyDown', { ...base, commands: ['selectAll'] });
    await this.keyEvent('keyUp', base);
  }

  /** Type `text` key by key, `wpm` words (five characters) a minute, each gap varied by a third. */
  async type(text: string, wpm: number): Promise<void> {
    const gap = 60_000 / (wpm * 5);
    for (const ch of text) {
      const started = Date.now();
      await this.key(ch === '\n' ? 'Enter' : ch);
      await sleep(Math.max(0, gap * between(0.67, 1.33) - (Date.now() - started)));
    }
  }

  /** Paste `text` at once, as from the clipboard. */
  async paste(text: string): Promise<void> {
    await this.control.send('Input.insertText', { text }, this.page);
  }

  private keyEvent(type: string, params: Record<string, unknown>): Promise<unknown> {
    return this.control.send('Input.dispatchKeyEvent', { type, ...params }, this.page);
  }
}

export { between, sleep };
