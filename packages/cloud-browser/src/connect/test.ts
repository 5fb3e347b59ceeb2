/**
 * `cloud-browser/test`: Playwright Test with the cloud browser. The worker-scoped `browser`
 * fixture is a cloud browser session, one per worker, opened with `use: { cloudBrowser }`
 * (and the `CLOUD_*` environment) and closed when the worker ends.
 */
import {
  type Browser,
  test as base,
  defineConfig as baseDefineConfig,
  expect,
  type PlaywrightTestConfig,
} from '@playwright/test';
import type { ServiceProtocol } from '../service/protocol.js';
import type { BrowserUrlOptions } from '../session/url.js';
import { connectPlaywright, serviceProtocol } from './playwright.js';
import type { CloudBrowserSession, ConnectOptions } from './session.js';

/** Worker options and fixtures this entry adds. */
export interface CloudBrowserWorkerFixtures {
  /** Session options of the cloud browser (docs/wire.md §2.4 wire names). @default {} */
  cloudBrowser: BrowserUrlOptions;
  /** How to connect: timeout, retries, keep-alive. @default {} */
  cloudConnect: ConnectOptions;
  /** The worker's session: run id, salt, VNC credentials. */
  cloudSession: CloudBrowserSession<Browser>;
}

/**
 * Playwright Test's `test`, with `browser` connected to the cloud browser.
 *
 * @example
 * // playwright.config.ts: use: { cloudBrowser: { proxy_pool: 'residential', timeout: 900 } }
 * import { test, expect } from 'cloud-browser/test';
 * test('title', async ({ page }) => { await page.goto('https://example.com'); await expect(page).toHaveTitle(/Example/); });
 */
export const test = base.extend<CloudBrowserTestFixtures, CloudBrowserWorkerFixtures>({
  service: async ({ page }, use) => {
    const service = await serviceProtocol(page);
    try {
      await use(service);
    } finally {
      await service.detach().catch(() => {});
    }
  },
  // The session's own fingerprint wins over Playwright Test's defaults (en-US, 1280x720):
  // a session opened with `languages`, `lang` or `resolution` keeps them in every context.
  // Overridden without options: they stay options, settable in `use`.
  locale: async ({ contextOptions, cloudBrowser }, use) =>
    use(contextOptions.locale ?? (cloudBrowser.languages || cloudBrowser.lang ? undefined : 'en-US')),
  viewport: async ({ contextOptions, cloudBrowser }, use) =>
    use(
      contextOptions.viewport !== undefined
        ? contextOptions.viewport
        : cloudBrowser.resolution
          ? null
          : { width: 1280, height: 720 },
    ),
  cloudBrowser: [{}, { scope: 'worker', option: true }],
  cloudConnect: [{}, { scope: 'worker', option: true }],
  cloudSession: [
    async ({ cloudBrowser, cloudConnect, playwright }, use) => {
      const session = await connectPlaywright(playwright.chromium, cloudBrowser, cloudConnect);
      try {
        await use(session);
      } finally {
        await session.close();
      }
    },
    { scope: 'worker' },
  ],
  browser: [
    async ({ cloudSession }, use) => {
      await use(cloudSession.browser);
    },
    { scope: 'worker' },
  ],
});

/** Test fixtures this entry adds. */
export interface CloudBrowserTestFixtures {
  /** The service browser's own domains on `page`: human-like input, captchas, downloads, rendered content. */
  service: ServiceProtocol;
}

/** The worker options this entry adds, settable in `use` of the config. */
export type CloudBrowserOptions = Pick<CloudBrowserWorkerFixtures, 'cloudBrowser' | 'cloudConnect'>;

/**
 * Playwright Test's `defineConfig`, typed so that `use` takes `cloudBrowser` and `cloudConnect`
 * (Playwright's own answers TS2769 for options it does not know).
 *
 * @example
 * export default defineConfig({ use: { cloudBrowser: { proxy_pool: 'residential', timeout: 900 } } });
 */
export function defineConfig(
  config: PlaywrightTestConfig<object, CloudBrowserOptions>,
  ...more: PlaywrightTestConfig[]
): PlaywrightTestConfig<object, CloudBrowserOptions> {
  return baseDefineConfig(config, ...more);
}

export type { CaptchaRecord } from '../service/domains.js';
export type { AntibotCommands, ServiceDownloads, ServiceProtocol } from '../service/protocol.js';
export { serviceProtocol, waitForCaptcha } from './playwright.js';
export type { CloudBrowserSession, ConnectOptions } from './session.js';
export { expect };
