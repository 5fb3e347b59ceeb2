import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    playwright: 'src/connect/playwright.ts',
    puppeteer: 'src/connect/puppeteer.ts',
    emulator: 'src/emulator/index.ts',
    test: 'src/connect/test.ts',
    webhooks: 'src/webhooks/index.ts',
    crawler: 'src/crawler/index.ts',
    api: 'src/api/index.ts',
    cli: 'src/cli/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // Keep `node:` specifiers as written: they cannot be shadowed by a package of the same name.
  removeNodeProtocol: false,
  splitting: true,
  treeshake: true,
  // Optional peers are the user's own: never bundled.
  external: ['playwright-core', 'puppeteer-core', '@playwright/test', '@sparticuz/chromium'],
});
