/**
 * Find (and, with @sparticuz/chromium, unpack) the browser once, before the test files run in
 * parallel: several workers unpacking it at the same moment could read a half-written file.
 */
import { findChromium } from '../packages/emulator/src/chromium.js';

export default async function setup(): Promise<void> {
  process.env.CHROME_PATH = await findChromium();
}
