/**
 * Open a session with VNC and keep it for a while, so you can watch the remote browser:
 * the native client's address and password, and the WebSocket (noVNC) view.
 * Run: npx tsx examples/vnc-debug.ts https://example.com [seconds]
 */
import { randomBytes } from 'node:crypto';
import { connectPlaywright } from 'cloud-browser/playwright';
import { chromium } from 'playwright-core';

const target = process.argv[2] ?? 'https://example.com';
const seconds = Number(process.argv[3] ?? 60);
const vncPassword = randomBytes(6).toString('hex');
const session = await connectPlaywright(chromium, {
  enable_vnc: true,
  vnc_password: vncPassword,
  timeout: Math.max(seconds + 30, 60),
});
try {
  const page = await session.browser.contexts()[0]?.newPage();
  await page?.goto(target);
  console.log(`watching ${await page?.title()}`);
  console.log(`native VNC: ${session.vnc?.tcp.url} password ${session.vnc?.tcp.password}`);
  console.log(`noVNC:      ${session.vnc?.websocket.url} password ${session.vnc?.websocket.password}`);
  await new Promise((r) => setTimeout(r, seconds * 1000));
} finally {
  await session.close();
}
