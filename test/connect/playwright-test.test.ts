import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

// Runs the example suite (examples/playwright-test) with the real Playwright Test runner,
// against the emulator its global setup starts, through the built `cloud-browser/test`.
const cli = createRequire(import.meta.url).resolve('@playwright/test/cli');
const root = fileURLToPath(new URL('../..', import.meta.url));

it('runs the example Playwright Test suite green against the emulator, one session per worker', async () => {
  const env = { ...process.env };
  delete env.CLOUD_BROWSER_URL;
  delete env.CLOUD_API_KEY;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [cli, 'test', '-c', 'examples/playwright-test', '--reporter=list'],
    { cwd: root, env, timeout: 120_000 },
  );
  expect(stdout).toContain('5 passed');
  expect(stdout).not.toContain('failed');
}, 150_000);
