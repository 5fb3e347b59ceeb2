/** RFB pointer and key events mapped to CDP input events. Pure: it keeps only the button and modifier state. */

/** A CDP input command for the page on view. */
export interface CdpInput {
  method: 'Input.dispatchMouseEvent' | 'Input.dispatchKeyEvent';
  params: Record<string, unknown>;
}

/** X keysyms of keys that type no text, as CDP names them. */
const SPECIAL_KEYS: Record<number, { key: string; code: string; keyCode: number; text?: string }> = {
  65288: { key: 'Backspace', code: 'Backspace', keyCode: 8 },
  65289: { key: 'Tab', code: 'Tab', keyCode: 9 },
  65293: { key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' },
  65307: { key: 'Escape', code: 'Escape', keyCode: 27 },
  65360: { key: 'Home', code: 'Home', keyCode: 36 },
  65361: { key: 'ArrowLeft', code: 'ArrowLeft', keyCode: 37 },
  65362: { key: 'ArrowUp', code: 'ArrowUp', keyCode: 38 },
  65363: { key: 'ArrowRight', code: 'ArrowRight', keyCode: 39 },
  65364: { key: 'ArrowDown', code: 'ArrowDown', keyCode: 40 },
  65365: { key: 'PageUp', code: 'PageUp', keyCode: 33 },
  65366: { key: 'PageDown', code: 'PageDown', keyCode: 34 },
  65367: { key: 'End', code: 'End', keyCode: 35 },
  65535: { key: 'Delete', code: 'Delete', keyCode: 46 },
  65505: { key: 'Shift', code: 'ShiftLeft', keyCode: 16 },
  65506: { key: 'Shift', code: 'ShiftRight', keyCode: 16 },
  65507: { key: 'Control', code: 'ControlLeft', keyCode: 17 },
  65508: { key: 'Control', code: 'ControlRight', keyCode: 17 },
  65511: { key: 'Meta', code: 'MetaLeft', keyCode: 91 },
  65512: { key: 'Meta', code: 'MetaRight', keyCode: 92 },
  65513: { key: 'Alt', code: 'AltLeft', keyCode: 18 },
  65514: { key: 'Alt', code: 'AltRight', keyCode: 18 },
};
const MODIFIER_BITS: Record<string, number> = { Alt: 1, Control: 2, Meta: 4, Shift: 8 };
const BUTTONS: [number, 'left' | 'middle' | 'right'][] = [
  [1, 'left'],
  [2, 'middle'],
  [4, 'right'],
];
// Wheel: buttons 4 and 5 scroll up and down, 6 and 7 left and right, as a press.
const WHEEL: [number, number, number][] = [
  [8, 0, -120],
  [16, 0, 120],
  [32, -120, 0],
  [64, 120, 0],
];

/** The character a keysym types, if any (Latin-1 keysyms and the Unicode range). */
function keysymText(keysym: number): string | undefined {
  if ((keysym >= 0x20 && keysym <= 0x7e) || (keysym >= 0xa0 && keysym <= 0xff)) return String.fromCharCode(keysym);
  if (keysym >= 0x1000100 && keysym <= 0x110ffff) return String.fromCodePoint(keysym - 0x1000000);
  return undefined;
}

/** CDP's `buttons` bit field (left 1, right 2, middle 4) from RFB's mask (left 1, middle 2, right 4). */
const cdpButtons = (mask: number) => (mask & 1 ? 1 : 0) | (mask & 4 ? 2 : 0) | (mask & 2 ? 4 : 0);

/** One viewer's input state: which buttons and modifiers are down. */
export class InputMapper {
  private buttons = 0;
  private modifiers = 0;

  /** A PointerEvent at picture pixel (`fx`, `fy`); `scale` is CSS pixels per picture pixel. */
  pointer(mask: number, fx: number, fy: number, scale: number): CdpInput[] {
    const x = fx * scale;
    const y = fy * scale;
    const out: CdpInput[] = [];
    const mouse = (params: Record<string, unknown>) =>
      out.push({ method: 'Input.dispatchMouseEvent', params: { x, y, modifiers: this.modifiers, ...params } });
    let changed = false;
    for (const [bit, button] of BUTTONS) {
      if ((mask & bit) !== (this.buttons & bit)) {
        changed = true;
        const type = mask & bit ? 'mousePressed' : 'mouseReleased';
        mouse({ type, button, clickCount: 1, buttons: cdpButtons(mask) });
      }
    }
    for (const [bit, deltaX, deltaY] of WHEEL) {
      if (mask & bit && !(this.buttons & bit)) mouse({ type: 'mouseWheel', deltaX, deltaY });
    }
    if (!changed && (mask & 0x78) === 0) mouse({ type: 'mouseMoved', button: 'none', buttons: cdpButtons(mask) });
    this.buttons = mask;
    return out;
  }

  /** A KeyEvent of X keysym `keysym`. */
  key(down: boolean, keysym: number): CdpInput {
    const special = SPECIAL_KEYS[keysym];
    const text = special?.text ?? keysymText(keysym);
    const keyName = special?.key ?? text ?? 'Unidentified';
    const bit = special ? (MODIFIER_BITS[special.key] ?? 0) : 0;
    if (bit) this.modifiers = down ? this.modifiers | bit : this.modifiers & ~bit;
    // With Control or Meta down, a key types nothing: it is a shortcut.
    const types = text !== undefined && !(this.modifiers & 6);
    const params: Record<string, unknown> = {
      type: down ? (types ? 'keyDown' : 'rawKeyDown') : 'keyUp',
      key: keyName,
      code: special?.code ?? '',
      windowsVirtualKeyCode: special?.keyCode ?? (text ? text.toUpperCase().charCodeAt(0) : 0),
      modifiers: this.modifiers,
    };
    if (down && types) params.text = text;
    return { method: 'Input.dispatchKeyEvent', params };
  }
}
