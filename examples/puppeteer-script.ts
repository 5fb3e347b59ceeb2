/**
 * A Puppeteer script in the cloud browser: open a page, read it, take a screenshot.
 * Run: CLOUD_BROWSER_URL=... CLOUD_API_KEY=... npx tsx examples/puppeteer-script.ts https://example.com
 */
import { connectPuppeteer } from 'cloud-browser/puppeteer';
import puppeteer from 'puppeteer-core';

const target = process.argv[2] ?? 'https://example.com';
const session = await connectPuppeteer(
  puppeteer,
  { resolution: '1280x800', block_fonts: true, timeout: 300 },
  { retries: 2 },
);
try {
  const page = await session.browser.newPage();
  await page.goto(target);
  const shot = await page.screenshot({ type: 'png' });
  console.log(`title: ${await page.title()}`);
  console.log(`screenshot: ${shot.length} bytes`);
  console.log(`run id: ${session.runId}`);
} finally {
  await session.close();
}
