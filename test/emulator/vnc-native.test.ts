/**
 * The native VNC port (D5): one TCP listener for every session, RFB 3.8 with VeNCrypt Plain
 * (username the run id, password `<salt>-<vnc_password>`), None for a client in
 * `hitl_allowed_networks`; checked with a raw RFB client written byte by byte.
 */
import { once } from 'node:events';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPlaywright } from '../../packages/cloud-browser/src/connect/playwright.js';
import { projectSalt } from '../../packages/cloud-browser/src/session/salt.js';
import { findChromium } from '../../packages/emulator/src/chromium.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { openVncView } from '../../packages/emulator/src/vnc/index.js';
import { remotePage } from '../support/remote-page.js';
import { firstPicture, greet, init, pointer, RawRfb, securityResult, vencryptPlain } from '../support/rfb.js';

// Green everywhere, and a button in the top left corner that says when it was clicked.
const PAGE = `<!doctype html><title>remote</title><style>html,body{margin:0;height:100%;background:rgb(0,200,0)}
#b{position:absolute;left:0;top:0;width:200px;height:100px}</style>
<button id="b" onclick="document.title='clicked'">click</button>`;

let emulator: Emulator;
let site: HttpServer;
let siteUrl: string;
let decoder: Browser;
let decoderPage: Page;

beforeAll(async () => {
  emulator = await startEmulator();
  site = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  site.listen(0, '127.0.0.1');
  await once(site, 'listening');
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  decoder = await chromium.launch({ executablePath: await findChromium(), args: ['--no-sandbox'] });
  decoderPage = await decoder.newPage();
});
afterAll(async () => {
  await decoder?.close();
  await emulator?.close();
  site?.close();
});

const remoteSession = (options: Record<string, unknown>) => remotePage(emulator, siteUrl, options);

/** The colour at (x, y) of a JPEG, decoded by a real Chromium. */
async function colourAt(jpeg: Buffer, x: number, y: number): Promise<number[]> {
  return decoderPage.evaluate(
    async ([b64, px, py]) => {
      const image = new Image();
      image.src = `data:image/jpeg;base64,${b64}`;
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.width;
      canvas.height = image.height;
      const g = canvas.getContext('2d') as CanvasRenderingContext2D;
      g.drawImage(image, 0, 0);
      return Array.from(g.getImageData(px as number, py as number, 1, 1).data.slice(0, 3));
    },
    [jpeg.toString('base64'), x, y] as const,
  );
}

describe('the native VNC port', () => {
  it('lets a client in with VeNCrypt Plain, shows the page and takes a click', async () => {
    const { session, page } = await remoteSession({ enable_vnc: true, vnc_password: 'native-secret-7' });
    const rfb = await RawRfb.open(emulator.vncPort);
    try {
      expect(session.vnc?.tcp.url).toBe(`vnc://${session.runId}@127.0.0.1:${emulator.vncPort}`);
      expect(session.vnc?.tcp.password).toBe(`${projectSalt(emulator.apiKey)}-native-secret-7`);
      // No network lets this client in without a password: VeNCrypt is the only type.
      expect(await greet(rfb)).toEqual([19]);
      expect(await vencryptPlain(rfb, session.runId as string, session.vnc?.tcp.password as string)).toEqual({
        ok: true,
      });
      expect(await init(rfb)).toEqual({ width: 800, height: 600, name: `cloud-browser ${session.runId}` });
      const picture = await firstPicture(rfb);
      expect([picture.width, picture.height]).toEqual([800, 600]);
      for (const [x, y] of [
        [400, 300],
        [700, 500],
      ] as const) {
        const [r, g, b] = await colourAt(picture.jpeg, x, y);
        expect(Math.abs((r as number) - 0) + Math.abs((g as number) - 200) + Math.abs((b as number) - 0)).toBeLessThan(
          40,
        );
      }
      // A click on the button, in picture pixels.
      pointer(rfb, 0, 100, 50);
      pointer(rfb, 1, 100, 50);
      pointer(rfb, 0, 100, 50);
      await expect.poll(() => page.title(), { timeout: 10_000 }).toBe('clicked');
    } finally {
      rfb.close();
      await session.close();
    }
  });

  it('refuses wrong credentials with one reason, whichever part was wrong, and closes', async () => {
    const one = await remoteSession({ enable_vnc: true, vnc_password: 'first-pass-1' });
    const two = await remoteSession({ enable_vnc: true, vnc_password: 'second-pass-2' });
    const salt = projectSalt(emulator.apiKey);
    try {
      const attempts: [string, string][] = [
        [one.session.runId as string, `${salt}-wrong-password`],
        [one.session.runId as string, 'first-pass-1'],
        [one.session.runId as string, `00000000-first-pass-1`],
        ['run-0000000000000000', `${salt}-first-pass-1`],
        // The other session's password does not open this one.
        [one.session.runId as string, `${salt}-second-pass-2`],
      ];
      for (const [username, password] of attempts) {
        const rfb = await RawRfb.open(emulator.vncPort);
        await greet(rfb);
        expect(await vencryptPlain(rfb, username, password)).toEqual({
          ok: false,
          reason: 'wrong username or password',
        });
        expect(await rfb.closed()).toBe(true);
      }
      // Each session opens with its own credentials, on the same port.
      for (const { session } of [one, two]) {
        const rfb = await RawRfb.open(emulator.vncPort);
        await greet(rfb);
        expect(await vencryptPlain(rfb, session.runId as string, session.vnc?.tcp.password as string)).toEqual({
          ok: true,
        });
        expect((await init(rfb)).name).toBe(`cloud-browser ${session.runId}`);
        rfb.close();
      }
    } finally {
      await one.session.close();
      await two.session.close();
    }
  });

  it('closes a native viewer when its session ends', async () => {
    const { session } = await remoteSession({ enable_vnc: true, vnc_password: 'ending-pass-3' });
    const rfb = await RawRfb.open(emulator.vncPort);
    await greet(rfb);
    await vencryptPlain(rfb, session.runId as string, session.vnc?.tcp.password as string);
    await init(rfb);
    await session.close();
    expect(await rfb.closed()).toBe(true);
  });

  it('refuses a client that does not speak RFB, and goes on serving', async () => {
    const rfb = await RawRfb.open(emulator.vncPort);
    await rfb.read(12);
    rfb.write(Buffer.from('GET / HTTP/1.1\r\n\r\n'));
    expect(await rfb.closed()).toBe(true);
    const next = await RawRfb.open(emulator.vncPort);
    expect(await greet(next)).toEqual([19]);
    next.close();
  });
});

describe('clients in hitl_allowed_networks', () => {
  it('attach with security type None, on the native port and the WebSocket view', async () => {
    const local = await startEmulator({ vncPort: 0 });
    try {
      const session = await connectPlaywright(chromium, {
        browser_url: local.browserUrl,
        api_key: local.apiKey,
        enable_vnc: true,
        hitl_allowed_networks: ['127.0.0.0/8'],
      });
      try {
        const rfb = await RawRfb.open(local.vncPort);
        // None first, then VeNCrypt.
        expect(await greet(rfb)).toEqual([1, 19]);
        rfb.write([1]);
        expect(await securityResult(rfb)).toEqual({ ok: true });
        expect((await init(rfb)).name).toBe(`cloud-browser ${session.runId}`);
        rfb.close();
        // The WebSocket view offers None as well; with no vnc_password, it has no VNC authentication.
        const view = await openVncView(`${local.browserUrl}run/${session.runId}/vnc`, '', 10_000, { none: true });
        view.socket.close();
        expect(view.name).toBe(`cloud-browser ${session.runId}`);
      } finally {
        await session.close();
      }
      // Outside the networks: VeNCrypt only.
      const other = await connectPlaywright(chromium, {
        browser_url: local.browserUrl,
        api_key: local.apiKey,
        enable_vnc: true,
        vnc_password: 'outside-pass',
        hitl_allowed_networks: ['10.0.0.0/8', '::1/128'],
      });
      try {
        const rfb = await RawRfb.open(local.vncPort);
        expect(await greet(rfb)).toEqual([19]);
        rfb.close();
      } finally {
        await other.close();
      }
    } finally {
      await local.close();
    }
  });
});

describe('the emulator’s native port', () => {
  it('takes another port when the one asked for is taken, and names it in the credentials', async () => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as AddressInfo).port;
    const local = await startEmulator({ vncPort: port });
    try {
      expect(local.vncPort).not.toBe(port);
      const session = await connectPlaywright(chromium, {
        browser_url: local.browserUrl,
        api_key: local.apiKey,
        enable_vnc: true,
        vnc_password: 'port-pass-9',
      });
      expect(session.vnc?.tcp.url).toBe(`vnc://${session.runId}@127.0.0.1:${local.vncPort}`);
      await session.close();
    } finally {
      await local.close();
      taken.close();
    }
  });

  it('refuses a port that is not a port', async () => {
    await expect(startEmulator({ vncPort: 70000 })).rejects.toThrow('`vncPort` must be');
    await expect(startEmulator({ vncPort: Number.NaN })).rejects.toThrow('`vncPort` must be');
  });
});
