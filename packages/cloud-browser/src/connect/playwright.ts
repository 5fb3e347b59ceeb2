/**
 * `cloud-browser/playwright`: connect the user's own Playwright `chromium` to the cloud browser.
 * Playwright is handed a loopback relay URL, never the browser URL with its key.
 */
import type { CaptchaRecord } from '../service/domains.js';
import { type CdpSessionLike, ServiceProtocol, waitOn } from '../service/protocol.js';
import type { BrowserUrlOptions, JoinTarget } from '../session/url.js';
import { startRelay } from './relay.js';
import { type CloudBrowserSession, CONNECT_DEFAULTS, type ConnectOptions, establish } from './session.js';

/** The part of Playwright's `BrowserType` we use: `chromium` from playwright, playwright-core or @playwright/test. */
export interface PlaywrightChromium<B extends PlaywrightBrowserLike> {
  connectOverCDP(endpointURL: string, options?: { timeout?: number }): Promise<B>;
}

/** The part of Playwright's `Browser` we use, to know when it has let go. */
export interface PlaywrightBrowserLike {
  isConnected(): boolean;
  once(event: 'disconnected', listener: () => void): unknown;
}

async function released(browser: PlaywrightBrowserLike | undefined): Promise<void> {
  if (!browser?.isConnected()) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 2000);
    browser.once('disconnected', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Open a cloud browser session and connect Playwright to it.
 *
 * @example
 * import { chromium } from 'playwright';
 * const session = await connectPlaywright(chromium, { proxy_pool: 'residential', enable_vnc: true, vnc_password: 'pw' });
 * const page = await session.browser.contexts()[0].newPage();
 * console.log(session.runId, session.vnc?.tcp.url);
 * await session.close();
 */
export async function connectPlaywright<B extends PlaywrightBrowserLike>(
  chromium: PlaywrightChromium<B>,
  options: BrowserUrlOptions | JoinTarget = {},
  connect: ConnectOptions = {},
): Promise<CloudBrowserSession<B>> {
  return establish(options, connect, 'Playwright', (opened) => {
    const relay = startRelay(opened.socket);
    return {
      connect: async () =>
        chromium.connectOverCDP((await relay).url, { timeout: connect.timeout ?? CONNECT_DEFAULTS.timeout }),
      cleanup: async (browser) => {
        const closing = released(browser);
        await (await relay).close();
        await closing;
      },
    };
  });
}

/** The part of Playwright's `Page` the service protocol uses. */
export interface PlaywrightPageLike {
  context(): { newCDPSession(page: never): Promise<unknown> };
}

/**
 * The service browser's own domains on a Playwright page, typed: human-like input
 * (`antibot`), captchas, downloads and the rendered content (README: The service's own protocol).
 *
 * @example
 * const service = await serviceProtocol(page);
 * await service.antibot.clickOn({ selector: { type: 'css', query: '#buy' } });
 * const markdown = (await service.renderedContent({ format: 'markdown' })).content;
 */
export async function serviceProtocol(page: PlaywrightPageLike): Promise<ServiceProtocol> {
  const session = await page.context().newCDPSession(page as never);
  return new ServiceProtocol(session as CdpSessionLike);
}

/**
 * Resolve with the page's next captcha once the browser solved it; reject with a
 * `CaptchaError` when it could not, or a `TimeoutError` after `timeout` ms (120000).
 *
 * @example
 * const solved = waitForCaptcha(page, { timeout: 30_000 });
 * await page.goto(url);
 * console.log((await solved).type);
 */
export function waitForCaptcha(
  page: PlaywrightPageLike,
  options: { timeout?: number; detectionId?: string } = {},
): Promise<CaptchaRecord> {
  return waitOn(serviceProtocol(page), options);
}

export type { CaptchaRecord } from '../service/domains.js';
export type { AntibotCommands, ServiceDownloads, ServiceProtocol } from '../service/protocol.js';
export type { CloudBrowserSession, ConnectOptions } from './session.js';
