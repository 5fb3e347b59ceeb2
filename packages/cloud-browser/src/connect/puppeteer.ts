/**
 * `cloud-browser/puppeteer`: connect the user's own Puppeteer to the cloud browser through
 * a transport over our socket, so Puppeteer never sees the URL (nor `wsEndpoint()` the key).
 */
import type { CaptchaRecord } from '../service/domains.js';
import { type CdpSessionLike, ServiceProtocol, waitOn } from '../service/protocol.js';
import type { BrowserUrlOptions, JoinTarget } from '../session/url.js';
import { type CloudBrowserSession, type ConnectOptions, establish } from './session.js';
import type { CloudSocket } from './socket.js';

/**
 * Puppeteer's `ConnectionTransport`, structurally. `onclose` is called with the WebSocket's close
 * code and (redacted) reason, which Puppeteer's own transports drop; `session.closed` has them too.
 */
export interface CdpTransport {
  send(message: string): void;
  close(): void;
  onmessage?: (message: string) => void;
  onclose?: (code?: number, reason?: string) => void;
}

/** The part of the `puppeteer` / `puppeteer-core` module we use. */
export interface PuppeteerModule<B> {
  connect(options: { transport: CdpTransport; defaultViewport?: null; protocolTimeout?: number }): Promise<B>;
}

/** Puppeteer options passed through. */
export interface PuppeteerConnectOptions extends ConnectOptions {
  /** Puppeteer's per-call CDP timeout, ms. */
  protocolTimeout?: number | undefined;
}

function transportOver(socket: CloudSocket): CdpTransport {
  const transport: CdpTransport = {
    send: (message) => socket.send(message),
    close: () => void socket.close(1000, 'closed by Puppeteer'),
  };
  socket.setFrameHandler((data) => transport.onmessage?.(data.toString('utf8')));
  void socket.closed.then((closed) => transport.onclose?.(closed.closeCode, closed.reason));
  return transport;
}

/**
 * Open a cloud browser session and connect Puppeteer to it. The viewport is left to the
 * session (`resolution`), not Puppeteer's 800x600 default.
 *
 * @example
 * import puppeteer from 'puppeteer-core';
 * const session = await connectPuppeteer(puppeteer, { timeout: 600 });
 * const page = await session.browser.newPage();
 * await session.close();
 */
export async function connectPuppeteer<B>(
  puppeteer: PuppeteerModule<B>,
  options: BrowserUrlOptions | JoinTarget = {},
  connect: PuppeteerConnectOptions = {},
): Promise<CloudBrowserSession<B>> {
  return establish(options, connect, 'Puppeteer', (opened) => ({
    connect: () =>
      puppeteer.connect({
        transport: transportOver(opened.socket),
        defaultViewport: null,
        ...(connect.protocolTimeout === undefined ? {} : { protocolTimeout: connect.protocolTimeout }),
      }),
    cleanup: async () => {},
  }));
}

/** The part of Puppeteer's `Page` the service protocol uses. */
export interface PuppeteerPageLike {
  createCDPSession(): Promise<unknown>;
}

/**
 * The service browser's own domains on a Puppeteer page, typed: human-like input
 * (`antibot`), captchas, downloads and the rendered content (README: The service's own protocol).
 *
 * @example
 * const service = await serviceProtocol(page);
 * await service.antibot.fill({ selector: { type: 'css', query: '#q' }, text: 'hello' });
 */
export async function serviceProtocol(page: PuppeteerPageLike): Promise<ServiceProtocol> {
  return new ServiceProtocol((await page.createCDPSession()) as CdpSessionLike);
}

/**
 * Resolve with the page's next captcha once the browser solved it; reject with a
 * `CaptchaError` when it could not, or a `TimeoutError` after `timeout` ms (120000).
 *
 * @example
 * const record = await waitForCaptcha(page, { timeout: 30_000 });
 */
export function waitForCaptcha(
  page: PuppeteerPageLike,
  options: { timeout?: number; detectionId?: string } = {},
): Promise<CaptchaRecord> {
  return waitOn(serviceProtocol(page), options);
}

export type { CaptchaRecord } from '../service/domains.js';
export type { AntibotCommands, ServiceDownloads, ServiceProtocol } from '../service/protocol.js';
export type { CloudBrowserSession, ConnectOptions } from './session.js';
