/** Playwright and Puppeteer behind one small interface, so each behaviour is tested with both. */
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import {
  type CloudBrowserSession,
  type ConnectOptions,
  connectPlaywright,
} from '../../packages/cloud-browser/src/connect/playwright.js';
import { connectPuppeteer } from '../../packages/cloud-browser/src/connect/puppeteer.js';
import type { BrowserUrlOptions } from '../../packages/cloud-browser/src/index.js';

export interface PageLike {
  goto(url: string): Promise<unknown>;
  title(): Promise<string>;
  url(): string;
  evaluate<T>(fn: () => T | Promise<T>): Promise<T>;
}

export interface Driver {
  name: 'playwright' | 'puppeteer';
  connect(options: BrowserUrlOptions, connect?: ConnectOptions): Promise<CloudBrowserSession<unknown>>;
  newPage(session: CloudBrowserSession<unknown>): Promise<PageLike>;
  pages(session: CloudBrowserSession<unknown>): Promise<PageLike[]>;
  isConnected(session: CloudBrowserSession<unknown>): boolean;
}

type PwBrowser = import('playwright-core').Browser;
type PpBrowser = import('puppeteer-core').Browser;

export const playwrightDriver: Driver = {
  name: 'playwright',
  connect: (options, connect) => connectPlaywright(chromium, options, connect),
  newPage: async (s) => {
    const context = (s.browser as PwBrowser).contexts()[0];
    if (!context) throw new Error('no default context');
    return (await context.newPage()) as unknown as PageLike;
  },
  pages: async (s) => ((s.browser as PwBrowser).contexts()[0]?.pages() ?? []) as unknown as PageLike[],
  isConnected: (s) => (s.browser as PwBrowser).isConnected(),
};

export const puppeteerDriver: Driver = {
  name: 'puppeteer',
  connect: (options, connect) => connectPuppeteer(puppeteer, options, connect),
  newPage: async (s) => (await (s.browser as PpBrowser).newPage()) as unknown as PageLike,
  pages: async (s) => (await (s.browser as PpBrowser).pages()) as unknown as PageLike[],
  isConnected: (s) => (s.browser as PpBrowser).connected,
};

export const drivers = [playwrightDriver, puppeteerDriver];

/** Open sockets and servers of this process, by kind. */
export function netHandles(): { sockets: number; servers: number } {
  const info = process.getActiveResourcesInfo();
  return {
    sockets: info.filter((k) => k === 'TCPSocketWrap').length,
    servers: info.filter((k) => k === 'TCPServerWrap').length,
  };
}

/** Poll `check` until it holds or `ms` pass; returns its last value. */
export async function eventually<T>(check: () => T | Promise<T>, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  let value = await check();
  while (!ok(value) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 25));
    value = await check();
  }
  return value;
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
