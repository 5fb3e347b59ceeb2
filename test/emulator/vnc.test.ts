/**
 * The emulator's VNC view, watched and driven by a real noVNC client running in a second real
 * Chromium: the picture, VNC authentication, pointer and keys, refusals.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join, normalize } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { allowedNetworks, inNetworks } from '../../packages/emulator/src/vnc/access.js';
import {
  InputMapper,
  jpegSize,
  openVncView,
  parseClientMessage,
  vncResponse,
} from '../../packages/emulator/src/vnc/index.js';
import { remotePage } from '../support/remote-page.js';

const novncRoot = join(dirname(createRequire(import.meta.url).resolve('@novnc/novnc')), '..');
const VIEWER = `<!doctype html><title>viewer</title><div id="screen" style="width:800px;height:600px"></div>
<script type="module">
import RFB from '/core/rfb.js';
window.openVnc = (url, password) => new Promise((resolve) => {
  const rfb = new RFB(document.getElementById('screen'), url, { credentials: { password } });
  window.rfb = rfb;
  rfb.addEventListener('connect', () => resolve('connect'));
  rfb.addEventListener('securityfailure', (e) => resolve('securityfailure: ' + e.detail.reason));
  rfb.addEventListener('disconnect', (e) => resolve('disconnect: clean ' + e.detail.clean));
});
window.pixel = (x, y) => {
  const canvas = document.querySelector('#screen canvas');
  if (!canvas || canvas.width === 0) return null;
  return Array.from(canvas.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3));
};
</script>`;
// The page on view: red on the left, blue on the right, a button and a text field.
const REMOTE = `<!doctype html><title>remote</title><style>body{margin:0}
#l{position:absolute;left:0;top:0;width:400px;height:600px;background:rgb(255,0,0)}
#r{position:absolute;left:400px;top:0;width:400px;height:600px;background:rgb(0,0,255)}
#b{position:absolute;left:50px;top:50px;width:100px;height:50px}
#t{position:absolute;left:50px;top:200px;width:200px;height:30px}</style>
<div id="l"></div><div id="r"></div>
<button id="b" onclick="document.title='clicked'">click</button><input id="t">`;

let emulator: Emulator;
let files: Server;
let base: string;
let viewerBrowser: Browser;

beforeAll(async () => {
  emulator = await startEmulator();
  files = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/viewer') return void res.writeHead(200, { 'content-type': 'text/html' }).end(VIEWER);
    if (path === '/remote') return void res.writeHead(200, { 'content-type': 'text/html' }).end(REMOTE);
    const file = normalize(join(novncRoot, path));
    if (!file.startsWith(novncRoot)) return void res.writeHead(403).end();
    readFile(file).then(
      (body) => res.writeHead(200, { 'content-type': 'text/javascript' }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  files.listen(0, '127.0.0.1');
  await once(files, 'listening');
  base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  viewerBrowser = await chromium.launch({ executablePath: process.env.CHROME_PATH as string, args: ['--no-sandbox'] });
});
afterAll(async () => {
  await viewerBrowser?.close();
  await emulator?.close();
  files?.close();
});

const remoteSession = (options: Record<string, unknown> = { enable_vnc: true, vnc_password: 'view-secret-42' }) =>
  remotePage(emulator, `${base}/remote`, options);

async function viewer(): Promise<Page> {
  const page = await viewerBrowser.newPage({ viewport: { width: 1000, height: 800 } });
  await page.goto(`${base}/viewer`);
  await page.waitForFunction(() => 'openVnc' in window);
  return page;
}

const pixelAt = (page: Page, x: number, y: number) =>
  page.evaluate(([px, py]) => (window as unknown as { pixel(x: number, y: number): number[] | null }).pixel(px, py), [
    x,
    y,
  ] as const);

async function waitForPixel(page: Page, x: number, y: number, near: number[]) {
  for (let i = 0; i < 200; i++) {
    const p = await pixelAt(page, x, y);
    if (p?.every((v, k) => Math.abs(v - (near[k] as number)) < 40)) return p;
    await page.waitForTimeout(50);
  }
  return pixelAt(page, x, y);
}

describe('the VNC view, through noVNC', () => {
  it('shows the newest page, takes clicks and keys, and refuses a wrong password', async () => {
    const { session, page } = await remoteSession();
    try {
      const url = session.vnc?.websocket.url as string;
      expect(url).toBe(`${emulator.browserUrl.replace(/\/$/, '')}/run/${session.runId}/vnc`);
      const view = await viewer();
      expect(
        await view.evaluate(
          (u) => (window as never as { openVnc(u: string, p: string): Promise<string> }).openVnc(u, 'view-secret-42'),
          url,
        ),
      ).toBe('connect');
      // The picture: red on the left, blue on the right, as the remote page draws them.
      const red = await waitForPixel(view, 300, 400, [255, 0, 0]);
      expect(red?.[0]).toBeGreaterThan(200);
      expect(red?.[2]).toBeLessThan(60);
      const blue = await waitForPixel(view, 600, 400, [0, 0, 255]);
      expect(blue?.[2]).toBeGreaterThan(200);
      expect(blue?.[0]).toBeLessThan(60);

      // A click on the button in the viewer clicks it in the remote page.
      const canvas = view.locator('#screen canvas');
      await canvas.click({ position: { x: 100, y: 75 } });
      await expect.poll(() => page.title(), { timeout: 10_000 }).toBe('clicked');

      // Keys typed into the viewer reach the focused field.
      await canvas.click({ position: { x: 150, y: 215 } });
      await expect.poll(() => page.evaluate(() => document.activeElement?.id), { timeout: 10_000 }).toBe('t');
      await view.keyboard.type('Hi there');
      await view.keyboard.press('Backspace');
      await expect.poll(() => page.inputValue('#t'), { timeout: 10_000 }).toBe('Hi ther');

      // A change on the remote page reaches the viewer.
      await page.evaluate(() => {
        (document.getElementById('l') as HTMLElement).style.background = 'rgb(0,255,0)';
      });
      const green = await waitForPixel(view, 300, 400, [0, 255, 0]);
      expect(green?.[1]).toBeGreaterThan(200);
      expect(green?.[0]).toBeLessThan(60);

      await expect(openVncView(url, 'not-the-password')).rejects.toThrow(
        'VNC authentication failed: wrong VNC password',
      );
      const opened = await openVncView(url, 'view-secret-42');
      opened.socket.close();
      expect(opened).toMatchObject({ width: 800, height: 600, name: `cloud-browser ${session.runId}` });
      const wrong = await viewer();
      expect(
        await wrong.evaluate(
          (u) => (window as never as { openVnc(u: string, p: string): Promise<string> }).openVnc(u, 'not-the-password'),
          url,
        ),
      ).toMatch(/^securityfailure/);
    } finally {
      await session.close();
    }
  });

  it('refuses the view of a session without VNC, and of an unknown run', async () => {
    const { session } = await remoteSession({});
    try {
      const view = await viewer();
      const origin = emulator.browserUrl.replace(/\/$/, '');
      for (const url of [`${origin}/run/${session.runId}/vnc`, `${origin}/run/run-0000/vnc`]) {
        const answer = await view.evaluate(
          (u) => (window as never as { openVnc(u: string, p: string): Promise<string> }).openVnc(u, 'x'),
          url,
        );
        expect(answer).toBe('disconnect: clean false');
      }
      // What noVNC cannot show: the HTTP refusal, its status and the service's error fields.
      const refusal = (url: string) =>
        new Promise<{ status: number; body: { code?: string } }>((resolve, reject) => {
          const ws = new WebSocket(url);
          ws.on('unexpected-response', (_req, res) => {
            let text = '';
            res.on('data', (c: Buffer) => {
              text += c;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
          });
          ws.on('open', () => reject(new Error('the view opened')));
          ws.on('error', () => {});
        });
      expect(await refusal(`${origin}/run/${session.runId}/vnc`)).toMatchObject({
        status: 403,
        body: { code: 'ERR::BROWSER::VNC_NOT_ENABLED' },
      });
      expect(await refusal(`${origin}/run/run-0000/vnc`)).toMatchObject({
        status: 404,
        body: { code: 'ERR::BROWSER::SESSION_NOT_FOUND' },
      });
    } finally {
      await session.close();
    }
  });
});

describe('the VNC view, against a raw client', () => {
  it('closes on garbage after the handshake, and the session lives on', async () => {
    const { session, page } = await remoteSession();
    try {
      const url = session.vnc?.websocket.url as string;
      for (let i = 0; i < 20; i++) {
        const { socket: ws, width, name } = await openVncView(url, 'view-secret-42');
        expect(width).toBe(800);
        expect(name).toBe(`cloud-browser ${session.runId}`);
        const closed = once(ws, 'close');
        // A message type RFB does not define, then noise.
        ws.send(Buffer.concat([Buffer.from([7 + (i % 100) + 10]), randomBytes(64)]));
        const [code] = (await closed) as [number];
        expect(code).toBe(1002);
      }
      expect(await page.title()).toBe('remote');
      const { socket: ws } = await openVncView(url, 'view-secret-42');
      const closed = once(ws, 'close');
      // Clipboard text that says it is 2 GiB long.
      ws.send(Buffer.from([6, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff]));
      expect(((await closed) as [number])[0]).toBe(1002);
    } finally {
      await session.close();
    }
  });

  it('refuses a client that does not speak RFB', async () => {
    const { session } = await remoteSession();
    try {
      const ws = new WebSocket(session.vnc?.websocket.url as string);
      await once(ws, 'message');
      const closed = once(ws, 'close');
      ws.send(Buffer.from('GET / HTTP/1.1\r\n'));
      expect(((await closed) as [number])[0]).toBe(1002);
    } finally {
      await session.close();
    }
  });
});

describe('VNC helpers', () => {
  it("answers a challenge exactly as noVNC's own DES does, for any password and challenge", async () => {
    const { DESECBCipher } = (await import(pathToFileURL(join(novncRoot, 'core/crypto/des.js')).href)) as {
      DESECBCipher: { importKey(key: number[]): { encrypt(a: unknown, data: Uint8Array): Uint8Array } };
    };
    for (let i = 0; i < 200; i++) {
      const password = randomBytes(1 + (i % 12)).toString('latin1');
      const challenge = randomBytes(16);
      // noVNC's genDES: the password's character codes as the key (its DES reverses the bits).
      const reference = DESECBCipher.importKey([...password].map((c) => c.charCodeAt(0))).encrypt(null, challenge);
      expect(vncResponse(password, challenge).toString('hex')).toBe(Buffer.from(reference).toString('hex'));
    }
  });

  it('reads a JPEG size from its frame header', () => {
    const sof = Buffer.from([
      0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0, 0, 0xff, 0xc0, 0x00, 0x11, 8, 0x02, 0x58, 0x03, 0x20, 3,
    ]);
    expect(jpegSize(Buffer.concat([sof, Buffer.alloc(16)]))).toEqual({ width: 800, height: 600 });
  });

  it('parses any bytes into a message, a wait for more, or an error, and never reads past them', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const parsed = parseClientMessage(Buffer.from(bytes));
        if (parsed && 'size' in parsed) expect(parsed.size).toBeLessThanOrEqual(bytes.length);
        if (parsed === undefined)
          expect(bytes.length === 0 || [0, 2, 3, 4, 5, 6].includes(bytes[0] as number)).toBe(true);
      }),
    );
    expect(parseClientMessage(Buffer.from([5, 1, 0, 10, 0, 20]))).toEqual({
      message: { type: 'pointer', mask: 1, x: 10, y: 20 },
      size: 6,
    });
    expect(parseClientMessage(Buffer.from([6, 0, 0, 0, 0x00, 0x20, 0, 1]))).toEqual({
      error: 'clipboard text over 1 MiB',
    });
    expect(parseClientMessage(Buffer.from([9]))).toEqual({ error: 'unsupported RFB message type 9' });
  });

  it('maps a press and release to one click, a wheel button to a scroll, and Control to a shortcut', () => {
    const mapper = new InputMapper();
    expect(mapper.pointer(1, 10, 20, 2).map((e) => [e.params.type, e.params.button, e.params.x, e.params.y])).toEqual([
      ['mousePressed', 'left', 20, 40],
    ]);
    expect(mapper.pointer(0, 10, 20, 2).map((e) => e.params.type)).toEqual(['mouseReleased']);
    expect(mapper.pointer(16, 10, 20, 1).map((e) => [e.params.type, e.params.deltaY])).toEqual([['mouseWheel', 120]]);
    expect(mapper.key(true, 0x61).params).toMatchObject({ type: 'keyDown', key: 'a', text: 'a' });
    mapper.key(true, 65507);
    expect(mapper.key(true, 0x61).params).toMatchObject({ type: 'rawKeyDown', key: 'a', modifiers: 2 });
    expect(mapper.key(true, 0x61).params.text).toBeUndefined();
  });

  it('lets in addresses of hitl_allowed_networks, IPv4-mapped ones too, and ignores entries that are not networks', () => {
    const networks = allowedNetworks(['10.0.0.0/8', '192.168.1.7', '::1/128', 'not-a-network', '10.0.0.0/99']);
    expect(inNetworks(networks, '10.20.30.40')).toBe(true);
    expect(inNetworks(networks, '::ffff:10.1.1.1')).toBe(true);
    expect(inNetworks(networks, '192.168.1.7')).toBe(true);
    expect(inNetworks(networks, '192.168.1.8')).toBe(false);
    expect(inNetworks(networks, '::1')).toBe(true);
    expect(inNetworks(networks, '127.0.0.1')).toBe(false);
    expect(inNetworks(allowedNetworks(undefined), '10.0.0.1')).toBe(false);
  });
});
