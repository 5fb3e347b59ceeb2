/**
 * The emulator's VNC view (spec 4, D5): an RFB 3.8 server over the WebSocket at
 * `/run/<run_id>/vnc`, as noVNC speaks it. VNC authentication takes the raw `vnc_password`; the
 * picture is the session's newest page, from Chromium's screencast, sent as Tight JPEG
 * rectangles (no pixels decoded here); pointer and key events drive the page through CDP input.
 */
import { createCipheriv, randomBytes, timingSafeEqual } from 'node:crypto';
import WebSocket from 'ws';
import type { CdpClient } from './cdp.js';

/** The pages of a session, newest last, as the control connection sees them. */
export interface PageSessions {
  /** CDP session ids of open pages, oldest first. */
  readonly ids: string[];
  /** Call `listener` whenever a page opens or closes. */
  onChange(listener: () => void): () => void;
}

const TIGHT = 7;
/** One more than the longest Tight data a compact length can announce. */
const MAX_TIGHT = 1 << 22;
/** The largest client message held (clipboard text): 1 MiB. */
const MAX_MESSAGE = 1 << 20;
const DESKTOP_SIZE = -223;

/** A JPEG's pixel size, from its first start-of-frame marker. */
export function jpegSize(jpeg: Buffer): { width: number; height: number } | undefined {
  let at = 2;
  while (at + 9 < jpeg.length && jpeg[at] === 0xff) {
    const marker = jpeg[at + 1] as number;
    const length = jpeg.readUInt16BE(at + 2);
    // SOF0-SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: jpeg.readUInt16BE(at + 5), width: jpeg.readUInt16BE(at + 7) };
    }
    at += 2 + length;
  }
  return undefined;
}

/** The 16-byte answer to a VNC challenge: DES with the password's bytes, each bit-reversed, as key. */
export function vncResponse(password: string, challenge: Buffer): Buffer {
  const key = Buffer.alloc(8);
  Buffer.from(password, 'latin1').copy(key, 0, 0, 8);
  for (let i = 0; i < 8; i++) {
    let b = key[i] as number;
    let r = 0;
    for (let bit = 0; bit < 8; bit++) {
      r = (r << 1) | (b & 1);
      b >>= 1;
    }
    key[i] = r;
  }
  // Single DES is triple DES with one key three times; OpenSSL 3 keeps plain DES in its legacy provider.
  const cipher = createCipheriv('des-ede3-ecb', Buffer.concat([key, key, key]), null);
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(challenge), cipher.final()]);
}

/** Tight's compact length: 7 bits a byte, low first, high bit set when another byte follows. */
function compactLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  if (n < 0x4000) return Buffer.from([(n & 0x7f) | 0x80, n >> 7]);
  return Buffer.from([(n & 0x7f) | 0x80, ((n >> 7) & 0x7f) | 0x80, n >> 14]);
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

/** The character a keysym types, if any (Latin-1 keysyms and the Unicode range). */
function keysymText(keysym: number): string | undefined {
  if ((keysym >= 0x20 && keysym <= 0x7e) || (keysym >= 0xa0 && keysym <= 0xff)) return String.fromCharCode(keysym);
  if (keysym >= 0x1000100 && keysym <= 0x110ffff) return String.fromCodePoint(keysym - 0x1000000);
  return undefined;
}

interface Frame {
  jpeg: Buffer;
  width: number;
  height: number;
  /** CSS pixels per picture pixel, for input coordinates. */
  scale: number;
}

/**
 * A base64 JPEG from CDP as a frame; undefined when it is not a JPEG or is too large for Tight's
 * compact length (4 MiB: the next frame will do). `cssWidth` is the page's width in CSS pixels.
 */
function toFrame(base64: string, cssWidth?: number): Frame | undefined {
  const jpeg = Buffer.from(base64, 'base64');
  const size = jpegSize(jpeg);
  if (!size || jpeg.length >= MAX_TIGHT) return undefined;
  return { jpeg, ...size, scale: cssWidth ? cssWidth / size.width : 1 };
}

/**
 * One session's screencast, shared by its viewers: it follows the newest page, starts with the
 * first viewer and stops with the last.
 */
export class Screencast {
  private readonly viewers = new Set<(frame: Frame) => void>();
  private page: string | undefined;
  private stopWatching: (() => void) | undefined;
  latest: Frame | undefined;

  constructor(
    private readonly control: CdpClient,
    private readonly pages: PageSessions,
  ) {
    control.on('Page.screencastFrame', (params, sessionId) => {
      if (sessionId !== this.page) return;
      void control.send('Page.screencastFrameAck', { sessionId: params.sessionId }, sessionId).catch(() => {});
      const frame = toFrame(
        params.data as string,
        (params.metadata as { deviceWidth?: number } | undefined)?.deviceWidth,
      );
      if (!frame) return;
      this.latest = frame;
      for (const viewer of this.viewers) viewer(frame);
    });
  }

  /** Send an input event to the page on view. */
  input(method: 'Input.dispatchMouseEvent' | 'Input.dispatchKeyEvent', params: Record<string, unknown>): void {
    if (this.page) void this.control.send(method, params, this.page).catch(() => {});
  }

  /** Add a viewer; the first one gets a picture at once (a screenshot) before the screencast's. */
  async join(viewer: (frame: Frame) => void): Promise<Frame | undefined> {
    this.viewers.add(viewer);
    if (this.viewers.size === 1) {
      this.stopWatching = this.pages.onChange(() => void this.follow());
      await this.follow();
    }
    if (!this.latest && this.page) {
      const shot = await this.control
        .send<{ data: string }>('Page.captureScreenshot', { format: 'jpeg', quality: 80 }, this.page)
        .catch(() => undefined);
      this.latest = shot ? toFrame(shot.data) : undefined;
    }
    return this.latest;
  }

  leave(viewer: (frame: Frame) => void): void {
    this.viewers.delete(viewer);
    if (this.viewers.size > 0) return;
    this.stopWatching?.();
    if (this.page) void this.control.send('Page.stopScreencast', {}, this.page).catch(() => {});
    this.page = undefined;
    this.latest = undefined;
  }

  /** Point the screencast at the newest page. */
  private async follow(): Promise<void> {
    const newest = this.pages.ids.at(-1);
    if (newest === this.page) return;
    if (this.page && this.pages.ids.includes(this.page)) {
      await this.control.send('Page.stopScreencast', {}, this.page).catch(() => {});
    }
    this.page = newest;
    this.latest = undefined;
    if (!newest) return;
    await this.control
      .send('Page.startScreencast', { format: 'jpeg', quality: 80, everyNthFrame: 1 }, newest)
      .catch(() => {});
  }
}

/**
 * Serve one viewer: the RFB handshake with VNC authentication, then framebuffer updates on
 * request and input events. Closes the socket on a protocol error or a wrong password.
 */
export function serveVnc(ws: WebSocket, options: { password: string; name: string; screencast: Screencast }): void {
  const { password, name, screencast } = options;
  let input: Buffer = Buffer.alloc(0);
  let state: 'version' | 'security' | 'auth' | 'init' | 'normal' = 'version';
  let minor = 8;
  const challenge = randomBytes(16);
  let width = 0;
  let height = 0;
  let encodings = new Set<number>();
  let requested = false;
  let pending: Frame | undefined;
  let buttons = 0;
  let modifiers = 0;
  let closed = false;

  const send = (data: Buffer) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(data);
  };
  /** Leave at once, after the handshake: RFB has no message for it, so the reason goes in the close. */
  const abort = (reason: string) => {
    if (closed) return;
    closed = true;
    ws.close(1002, reason.slice(0, 120));
  };
  /** Refuse during the handshake: a failed SecurityResult, its reason (RFB 3.8 only), then close. */
  const refuse = (reason: string) => {
    if (closed) return;
    closed = true;
    const text = Buffer.from(reason, 'utf8');
    const head = Buffer.alloc(8);
    head.writeUInt32BE(1, 0);
    head.writeUInt32BE(text.length, 4);
    send(minor >= 8 ? Buffer.concat([head, text]) : head.subarray(0, 4));
    ws.close(1000, reason.slice(0, 120));
  };

  const update = () => {
    if (!requested || !pending || closed) return;
    const frame = pending;
    pending = undefined;
    requested = false;
    const rects: Buffer[] = [];
    let count = 1;
    if ((frame.width !== width || frame.height !== height) && encodings.has(DESKTOP_SIZE)) {
      width = frame.width;
      height = frame.height;
      const resize = Buffer.alloc(12);
      resize.writeUInt16BE(width, 4);
      resize.writeUInt16BE(height, 6);
      resize.writeInt32BE(DESKTOP_SIZE, 8);
      rects.push(resize);
      count++;
    }
    const header = Buffer.alloc(12);
    header.writeUInt16BE(Math.min(frame.width, width), 4);
    header.writeUInt16BE(Math.min(frame.height, height), 6);
    header.writeInt32BE(TIGHT, 8);
    // Compression control 0x90: a JPEG picture follows, with its compact length.
    rects.push(header, Buffer.from([0x90]), compactLength(frame.jpeg.length), frame.jpeg);
    const start = Buffer.alloc(4);
    start.writeUInt16BE(count, 2);
    send(Buffer.concat([start, ...rects]));
  };
  const viewer = (frame: Frame) => {
    pending = frame;
    update();
  };

  const mouse = (mask: number, fx: number, fy: number) => {
    const scale = screencast.latest?.scale ?? 1;
    const x = fx * scale;
    const y = fy * scale;
    const names: [number, 'left' | 'middle' | 'right'][] = [
      [1, 'left'],
      [2, 'middle'],
      [4, 'right'],
    ];
    const cdpButtons = (m: number) => (m & 1 ? 1 : 0) | (m & 4 ? 2 : 0) | (m & 2 ? 4 : 0);
    const dispatch = (params: Record<string, unknown>) =>
      screencast.input('Input.dispatchMouseEvent', { x, y, modifiers, ...params });
    let changed = false;
    for (const [bit, button] of names) {
      if ((mask & bit) !== (buttons & bit)) {
        changed = true;
        const now = mask & bit ? 'mousePressed' : 'mouseReleased';
        dispatch({ type: now, button, clickCount: 1, buttons: cdpButtons(mask) });
      }
    }
    // Wheel: buttons 4 and 5 scroll up and down, 6 and 7 left and right, as a press.
    const wheel: [number, number, number][] = [
      [8, 0, -120],
      [16, 0, 120],
      [32, -120, 0],
      [64, 120, 0],
    ];
    for (const [bit, deltaX, deltaY] of wheel) {
      if (mask & bit && !(buttons & bit)) dispatch({ type: 'mouseWheel', deltaX, deltaY });
    }
    if (!changed && (mask & 0x78) === 0) dispatch({ type: 'mouseMoved', button: 'none', buttons: cdpButtons(mask) });
    buttons = mask;
  };

  const key = (down: boolean, keysym: number) => {
    const special = SPECIAL_KEYS[keysym];
    const text = special?.text ?? keysymText(keysym);
    const keyName = special?.key ?? text ?? 'Unidentified';
    const bit = special ? (MODIFIER_BITS[special.key] ?? 0) : 0;
    if (bit) modifiers = down ? modifiers | bit : modifiers & ~bit;
    const params: Record<string, unknown> = {
      type: down ? (text && !(modifiers & 6) ? 'keyDown' : 'rawKeyDown') : 'keyUp',
      key: keyName,
      code: special?.code ?? '',
      windowsVirtualKeyCode: special?.keyCode ?? (text ? text.toUpperCase().charCodeAt(0) : 0),
      modifiers,
    };
    if (down && text && !(modifiers & 6)) params.text = text;
    screencast.input('Input.dispatchKeyEvent', params);
  };

  /** Handle what has arrived; returns false when more bytes are needed. */
  const step = (): boolean => {
    switch (state) {
      case 'version': {
        if (input.length < 12) return false;
        const match = /^RFB 003\.00(\d)\n$/.exec(input.subarray(0, 12).toString('latin1'));
        input = input.subarray(12);
        if (!match) {
          closed = true;
          ws.close(1002, 'not an RFB client');
          return false;
        }
        minor = Math.min(8, Number(match[1]));
        if (minor >= 7) send(Buffer.from([1, 2]));
        else {
          const type = Buffer.alloc(4);
          type.writeUInt32BE(2);
          send(type);
          send(challenge);
          state = 'auth';
          return true;
        }
        state = 'security';
        return true;
      }
      case 'security': {
        if (input.length < 1) return false;
        const type = input[0];
        input = input.subarray(1);
        if (type !== 2) {
          refuse('only VNC authentication is offered');
          return false;
        }
        send(challenge);
        state = 'auth';
        return true;
      }
      case 'auth': {
        if (input.length < 16) return false;
        const answer = input.subarray(0, 16);
        input = input.subarray(16);
        if (!timingSafeEqual(answer, vncResponse(password, challenge))) {
          refuse('wrong VNC password');
          return false;
        }
        send(Buffer.alloc(4)); // SecurityResult: OK
        state = 'init';
        return true;
      }
      case 'init': {
        if (input.length < 1) return false;
        input = input.subarray(1);
        state = 'normal';
        void screencast.join(viewer).then((first) => {
          if (closed) return;
          width = first?.width ?? 1280;
          height = first?.height ?? 720;
          const nameBytes = Buffer.from(name, 'utf8');
          const init = Buffer.alloc(24);
          init.writeUInt16BE(width, 0);
          init.writeUInt16BE(height, 2);
          // 32 bits a pixel, depth 24, little-endian, true colour, 8 bits a channel: red, green, blue.
          Buffer.from([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0]).copy(init, 4);
          init.writeUInt32BE(nameBytes.length, 20);
          send(Buffer.concat([init, nameBytes]));
          pending ??= first;
          update();
        });
        return true;
      }
      case 'normal': {
        if (input.length < 1) return false;
        const type = input[0];
        const need: Record<number, number> = { 0: 20, 3: 10, 4: 8, 5: 6 };
        if (type === 2) {
          if (input.length < 4) return false;
          const size = 4 + 4 * input.readUInt16BE(2);
          if (input.length < size) return false;
          encodings = new Set(Array.from({ length: (size - 4) / 4 }, (_, i) => input.readInt32BE(4 + 4 * i)));
          input = input.subarray(size);
          if (!encodings.has(TIGHT)) abort('the VNC view sends Tight JPEG pictures: enable the Tight encoding');
          return !closed;
        }
        if (type === 6) {
          if (input.length < 8) return false;
          const size = 8 + Math.abs(input.readInt32BE(4));
          if (size > MAX_MESSAGE) {
            abort('clipboard text over 1 MiB');
            return false;
          }
          if (input.length < size) return false;
          input = input.subarray(size);
          return true;
        }
        const size = type === undefined ? undefined : need[type];
        if (size === undefined) {
          abort(`unsupported RFB message type ${type}`);
          return false;
        }
        if (input.length < size) return false;
        const message = input.subarray(0, size);
        input = input.subarray(size);
        if (type === 3) {
          requested = true;
          // A full (not incremental) request wants the picture again even if it has not changed.
          if (message[1] === 0 && !pending) pending = screencast.latest;
          update();
        } else if (type === 4) key(message[1] === 1, message.readUInt32BE(4));
        else if (type === 5) mouse(message[1] as number, message.readUInt16BE(2), message.readUInt16BE(4));
        return true;
      }
    }
  };

  ws.on('message', (data: Buffer) => {
    input = input.length ? Buffer.concat([input, data]) : data;
    while (!closed && input.length > 0 && step()) {}
  });
  ws.on('close', () => {
    closed = true;
    screencast.leave(viewer);
  });
  ws.on('error', () => {});
  send(Buffer.from('RFB 003.008\n', 'latin1'));
}

/**
 * Open a VNC view, authenticate and read its greeting: the framebuffer size and desktop name.
 * Fails with the server's reason on a wrong password. The socket stays open for what follows;
 * close it when done. The demo uses it to show the view answers.
 */
export async function openVncView(
  url: string,
  password: string,
  timeoutMs = 10_000,
): Promise<{ width: number; height: number; name: string; socket: WebSocket }> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  let input: Buffer = Buffer.alloc(0);
  let wake = () => {};
  let failure: Error | undefined;
  const onMessage = (d: Buffer) => {
    input = Buffer.concat([input, d]);
    wake();
  };
  const stop = (e: Error) => {
    failure ??= e;
    wake();
  };
  const onClose = (_code: number, reason: Buffer) =>
    stop(new Error(`the VNC view closed: ${reason.toString() || 'no reason'}`));
  ws.on('message', onMessage);
  ws.on('error', stop);
  ws.on('close', onClose);
  const timer = setTimeout(() => stop(new Error(`the VNC view did not answer within ${timeoutMs} ms`)), timeoutMs);
  const read = async (n: number): Promise<Buffer> => {
    while (input.length < n) {
      if (failure) throw failure;
      await new Promise<void>((r) => {
        wake = r;
      });
    }
    const out = input.subarray(0, n);
    input = input.subarray(n);
    return out;
  };
  try {
    if ((await read(12)).toString('latin1') !== 'RFB 003.008\n') throw new Error('not an RFB 3.8 server');
    ws.send(Buffer.from('RFB 003.008\n', 'latin1'));
    const types = await read((await read(1))[0] as number);
    if (!types.includes(2)) throw new Error('the view does not offer VNC authentication');
    ws.send(Buffer.from([2]));
    ws.send(vncResponse(password, await read(16)));
    if ((await read(4)).readUInt32BE(0) !== 0) {
      throw new Error(`VNC authentication failed: ${(await read((await read(4)).readUInt32BE(0))).toString()}`);
    }
    ws.send(Buffer.from([1]));
    const init = await read(24);
    const name = (await read(init.readUInt32BE(20))).toString('utf8');
    return { width: init.readUInt16BE(0), height: init.readUInt16BE(2), name, socket: ws };
  } catch (error) {
    ws.close();
    throw error;
  } finally {
    clearTimeout(timer);
    ws.off('message', onMessage);
    ws.off('close', onClose);
  }
}
