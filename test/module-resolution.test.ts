/**
 * The package's types, as TypeScript users of every module setting resolve them by the
 * package's name: `module: commonjs` (moduleResolution node10, where only `typesVersions`
 * reaches a subpath), node16 from CommonJS and from ESM, and bundler. Runs against the build.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A user's file naming one export of every subpath, each used with its type. */
const CONSUMER = `
import { buildBrowserUrl, type BrowserUrlOptions } from 'cloud-browser';
import { connectPlaywright } from 'cloud-browser/playwright';
import { connectPuppeteer } from 'cloud-browser/puppeteer';
import { startEmulator, type Emulator } from 'cloud-browser/emulator';
import type { CloudBrowserWorkerFixtures } from 'cloud-browser/test';
import { createWebhookHandler } from 'cloud-browser/webhooks';
import { CrawlerClient } from 'cloud-browser/crawler';
import { verifyRequest } from 'cloud-browser/webhooks/web';
import { CloudBrowserApi } from 'cloud-browser/api';
const options: BrowserUrlOptions = { timeout: 60 };
const url: URL = buildBrowserUrl(options);
const emulator: Promise<Emulator> = startEmulator();
type Fixtures = CloudBrowserWorkerFixtures;
export const used = [url, emulator, connectPlaywright, connectPuppeteer, createWebhookHandler, verifyRequest, CrawlerClient, CloudBrowserApi];
export type { Fixtures };
`;

const SETTINGS = [
  ['module commonjs, moduleResolution node10', 'commonjs', { module: 'commonjs', moduleResolution: 'node10' }, 'ts'],
  ['node16 from CommonJS', 'commonjs', { module: 'node16', moduleResolution: 'node16' }, 'ts'],
  ['node16 from ESM', 'module', { module: 'node16', moduleResolution: 'node16' }, 'ts'],
  ['bundler', 'module', { module: 'esnext', moduleResolution: 'bundler' }, 'ts'],
] as const;

describe("the package's types resolve under every module setting", () => {
  it.each(SETTINGS)(
    '%s',
    (_name, type, compilerOptions, ext) => {
      const dir = mkdtempSync(join(tmpdir(), 'cloud-browser-types-'));
      made.push(dir);
      mkdirSync(join(dir, 'node_modules'));
      symlinkSync(ROOT, join(dir, 'node_modules/cloud-browser'), 'dir');
      // The user's own copies of the peers and Node's types, as an installed project has them.
      for (const name of ['@types', 'playwright-core', 'puppeteer-core', '@playwright', 'ws', 'zod']) {
        symlinkSync(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name), 'dir');
      }
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'user', private: true, type }));
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            ...compilerOptions,
            target: 'es2022',
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: ['node'],
          },
          files: [`consumer.${ext}`],
        }),
      );
      writeFileSync(join(dir, `consumer.${ext}`), CONSUMER);
      let output = '';
      try {
        execFileSync(process.execPath, [TSC, '-p', dir], { cwd: dir, encoding: 'utf8' });
      } catch (error) {
        output = String((error as { stdout?: string }).stdout ?? error);
      }
      expect(output).toBe('');
    },
    60_000,
  );
});
