/** A Playwright session on the emulator at 800x600, with one page open at `url`: what a VNC viewer watches. */
import { chromium } from 'playwright-core';
import { connectPlaywright } from '../../packages/cloud-browser/src/connect/playwright.js';
import type { Emulator } from '../../packages/emulator/src/index.js';

export async function remotePage(emulator: Emulator, url: string, options: Record<string, unknown>) {
  const session = await connectPlaywright(chromium, {
    browser_url: emulator.browserUrl,
    api_key: emulator.apiKey,
    resolution: '800x600',
    ...options,
  });
  const context = session.browser.contexts()[0] ?? (await session.browser.newContext());
  const page = await context.newPage();
  await page.setViewportSize({ width: 800, height: 600 });
  await page.goto(url);
  return { session, page };
}
