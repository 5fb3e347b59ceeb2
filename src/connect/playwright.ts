/**
 * `cloud-browser/playwright`: connect the user's own Playwright `chromium` to the cloud browser.
 * Playwright is handed a loopback relay URL, never the browser URL with its key.
 */
import type { BrowserUrlOptions } from '../session/url.js';
import { startRelay } from './relay.js';
import { attach, type CloudBrowserSession, type ConnectOptions, makeSession, openSession } from './session.js';

/** The part of Playwright's `BrowserType` we use: `chromium` from playwright, playwright-core or @playwright/test. */
export interface PlaywrightChromium<B> {
  connectOverCDP(endpointURL: string, options?: { timeout?: number }): Promise<B>;
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
export async function connectPlaywright<B>(
  chromium: PlaywrightChromium<B>,
  options: BrowserUrlOptions = {},
  connect: ConnectOptions = {},
): Promise<CloudBrowserSession<B>> {
  const opened = await openSession(options, connect);
  const relay = await startRelay(opened.socket);
  const browser = await attach(
    opened,
    'Playwright',
    () => chromium.connectOverCDP(relay.url, { timeout: connect.timeout ?? 30_000 }),
    () => relay.close(),
    connect.signal,
  );
  return makeSession(opened, browser, () => relay.close());
}

export type { CloudBrowserSession, ConnectOptions } from './session.js';
