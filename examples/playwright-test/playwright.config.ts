/**
 * A Playwright Test suite that runs in the cloud browser. With no `CLOUD_BROWSER_URL` set,
 * the global setup starts the local emulator (and a local site) so it runs offline.
 * Run: npx playwright test -c examples/playwright-test
 */
import { defineConfig } from '@playwright/test';
import type { CloudBrowserWorkerFixtures } from 'cloud-browser/test';

export default defineConfig<object, Pick<CloudBrowserWorkerFixtures, 'cloudBrowser' | 'cloudConnect'>>({
  testDir: '.',
  testMatch: '*.spec.ts',
  outputDir: '../../test-results/playwright-test',
  globalSetup: './global-setup.ts',
  workers: 2,
  fullyParallel: true,
  reporter: 'list',
  use: {
    cloudBrowser: { languages: ['en-GB', 'en'], resolution: '1280x800', timeout: 600 },
    cloudConnect: { retries: 2 },
  },
});
