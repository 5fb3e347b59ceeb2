/** A page and its service protocol, through Playwright or Puppeteer, for the service protocol's tests. */
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import * as pw from '../../packages/cloud-browser/src/connect/playwright.js';
import * as pp from '../../packages/cloud-browser/src/connect/puppeteer.js';
import type { CloudBrowserSession } from '../../packages/cloud-browser/src/connect/session.js';
import type { BrowserUrlOptions } from '../../packages/cloud-browser/src/index.js';
import type { ServiceProtocol } from '../../packages/cloud-browser/src/service/protocol.js';

export interface ServicePage {
  goto(url: string): Promise<unknown>;
  evaluate<T>(fn: string): Promise<T>;
  /** A raw CDP session on the page, untyped. */
  cdp(): Promise<{
    send(method: string, params?: object): Promise<unknown>;
    on(e: string, l: (p: never) => void): unknown;
  }>;
}

export interface ServiceDriver {
  name: 'playwright' | 'puppeteer';
  open(
    options: BrowserUrlOptions,
  ): Promise<{ session: CloudBrowserSession<unknown>; page: ServicePage; service: ServiceProtocol; raw: unknown }>;
  waitForCaptcha(page: unknown, options?: { timeout?: number }): ReturnType<typeof pw.waitForCaptcha>;
}

const playwright: ServiceDriver = {
  name: 'playwright',
  async open(options) {
    const session = await pw.connectPlaywright(chromium, options);
    const context = session.browser.contexts()[0];
    if (!context) throw new Error('no default context');
    const page = await context.newPage();
    return {
      session,
      raw: page,
      service: await pw.serviceProtocol(page),
      page: {
        goto: (url) => page.goto(url),
        evaluate: (fn) => page.evaluate(fn),
        cdp: async () => (await page.context().newCDPSession(page)) as never,
      },
    };
  },
  waitForCaptcha: (page, options) => pw.waitForCaptcha(page as never, options),
};

const pptr: ServiceDriver = {
  name: 'puppeteer',
  async open(options) {
    const session = await pp.connectPuppeteer(puppeteer, options);
    const page = await session.browser.newPage();
    return {
      session,
      raw: page,
      service: await pp.serviceProtocol(page),
      page: {
        goto: (url) => page.goto(url),
        evaluate: <T>(fn: string) => page.evaluate(fn) as Promise<T>,
        cdp: async () => (await page.createCDPSession()) as never,
      },
    };
  },
  waitForCaptcha: (page, options) => pp.waitForCaptcha(page as never, options),
};

export const serviceDrivers = [playwright, pptr];
