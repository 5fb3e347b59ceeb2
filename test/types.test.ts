/**
 * The packages' types as a user gets them: both packed (`npm pack`, what a publish ships),
 * installed into a fresh project that has neither our dev dependencies nor zod, and a user's
 * file type-checked under every module setting, with `skipLibCheck` on (most templates) and off.
 * Each wrong option carries `@ts-expect-error`: were a type `any`, the unused directive fails.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installInto, packWorkspace } from './support/packed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
let work = '';
let project = '';

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'cloud-browser-packed-'));
  project = installInto(work, 'user', packWorkspace(work));
  // The user's own peers and Node's types, as a project that uses them has them.
  for (const name of ['@types/node', 'playwright-core', 'puppeteer-core', '@playwright/test', 'playwright']) {
    mkdirSync(join(project, 'node_modules', name, '..'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', name), join(project, 'node_modules', name), 'dir');
  }
}, 240_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A user's file naming one export of every subpath; every wrong option is an expected error. */
const CONSUMER = `
import { buildBrowserUrl, type BrowserUrlOptions, browserSessionSchema } from 'cloud-browser';
import { connectPlaywright, type ServiceProtocol } from 'cloud-browser/playwright';
import type { ServiceParams, ServiceResult } from 'cloud-browser';
import { connectPuppeteer } from 'cloud-browser/puppeteer';
import type { CloudBrowserWorkerFixtures } from 'cloud-browser/test';
import { createWebhookHandler } from 'cloud-browser/webhooks';
import { type CrawlConfig, CrawlerClient } from 'cloud-browser/crawler';
import { verifyRequest } from 'cloud-browser/webhooks/web';
import { CloudBrowserApi, type VaultItemInput } from 'cloud-browser/api';
import { startEmulator, type Emulator } from 'cloud-browser-emulator';

const options: BrowserUrlOptions = { timeout: 60, languages: ['en-US', 'fr'], os: 'windows' };
// @ts-expect-error timeout is a number of seconds
export const badTimeout: BrowserUrlOptions = { timeout: 'not a number' };
// @ts-expect-error languages is a list or a comma-separated string
export const badLanguages: BrowserUrlOptions = { languages: 42 };
// @ts-expect-error os is one of the listed systems
export const badOs: BrowserUrlOptions = { os: 'plan9' };
export const crawl: CrawlConfig = { url: 'https://example.com', page_limit: 10, content_formats: ['markdown'] };
// @ts-expect-error url is a string
export const badUrl: CrawlConfig = { url: 5 };
// @ts-expect-error page_limit is a number
export const badLimit: CrawlConfig = { url: 'https://example.com', page_limit: 'x' };
// @ts-expect-error no such crawl option
export const unknownOption: CrawlConfig = { url: 'https://example.com', pages: 3 };
export const item: VaultItemInput = { type: 'password', label: 'Shop', origin: 'https://shop.example', secret: { password: 'p' } };
// @ts-expect-error a password item's secret is { password }
export const badItem: VaultItemInput = { type: 'password', label: 'Shop', origin: 'https://shop.example', secret: { pin: 1 } };
export const click: ServiceParams<'Antibot.clickOn'> = { selector: { type: 'role', query: 'button|Buy' }, clickCount: 2 };
// @ts-expect-error a selector's type is one of css, xpath, axNodeId, coord, role, bottom
export const badSelector: ServiceParams<'Antibot.clickOn'> = { selector: { type: 'label', query: 'Buy' } };
// @ts-expect-error fill needs its text
export const badFill: ServiceParams<'Antibot.fill'> = { selector: { type: 'css', query: '#q' } };
export const records = (r: ServiceResult<'Antibot.getSolvedCaptchas'>): string[] => r.records.map((x) => x.status);
export const typed = (service: ServiceProtocol) => [
  service.antibot.clickOn({ selector: { type: 'css', query: '#buy' } }),
  // @ts-expect-error wpm is a number
  service.antibot.typeText({ text: 'hi', wpm: 'fast' }),
  service.on('Antibot.captchaSolved', (e) => e.method.toUpperCase()),
  // @ts-expect-error no such event
  service.on('Antibot.captchaLost', () => {}),
];
const parsed = browserSessionSchema.safeParse({ timeout: 60 });
export const languages: string[] | undefined = parsed.success ? parsed.data.languages : undefined;
const url: URL = buildBrowserUrl(options);
const emulator: Promise<Emulator> = startEmulator();
type Fixtures = CloudBrowserWorkerFixtures;
export const used = [url, emulator, connectPlaywright, connectPuppeteer, createWebhookHandler, verifyRequest, CrawlerClient, CloudBrowserApi];
export type { Fixtures };
`;

const SETTINGS = [
  ['module commonjs, moduleResolution node10', 'commonjs', { module: 'commonjs', moduleResolution: 'node10' }],
  ['node16 from CommonJS', 'commonjs', { module: 'node16', moduleResolution: 'node16' }],
  ['node16 from ESM', 'module', { module: 'node16', moduleResolution: 'node16' }],
  ['bundler', 'module', { module: 'esnext', moduleResolution: 'bundler' }],
] as const;

const CASES = SETTINGS.flatMap(([name, type, compilerOptions]) =>
  [true, false].map(
    (skipLibCheck) => [`${name}, skipLibCheck ${skipLibCheck}`, type, compilerOptions, skipLibCheck] as const,
  ),
);

describe('the packed packages, installed without zod or any dev dependency', () => {
  it('have no zod to lean on', () => {
    expect(existsSync(join(project, 'node_modules', 'zod'))).toBe(false);
    expect(existsSync(join(project, 'node_modules', 'cloud-browser', 'dist', 'index.d.ts'))).toBe(true);
    for (const pkg of ['cloud-browser', 'cloud-browser-emulator']) {
      const dist = join(project, 'node_modules', pkg, 'dist');
      const named = readdirSync(dist).filter(
        (f) => /\.d\.c?ts$/.test(f) && /from 'zod'|import\('zod'\)/.test(readFileSync(join(dist, f), 'utf8')),
      );
      expect(named, `${pkg}'s declarations import zod`).toEqual([]);
    }
  });

  it.each(CASES)(
    'type-check a user file, wrong options refused: %s',
    (name, type, compilerOptions, skipLibCheck) => {
      const dir = join(project, name.replace(/[^a-z0-9]+/gi, '-'));
      mkdirSync(dir);
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'user-file', private: true, type }));
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            ...compilerOptions,
            target: 'es2022',
            lib: ['es2022', 'dom'],
            strict: true,
            noEmit: true,
            skipLibCheck,
            // As most projects set it; puppeteer-core's own dependencies need it with skipLibCheck off.
            esModuleInterop: true,
            types: ['node'],
          },
          files: ['consumer.ts'],
        }),
      );
      writeFileSync(join(dir, 'consumer.ts'), CONSUMER);
      let output = '';
      try {
        execFileSync(process.execPath, [TSC, '-p', dir], { cwd: dir, encoding: 'utf8' });
      } catch (error) {
        output = String((error as { stdout?: string }).stdout ?? error);
      }
      expect(output).toBe('');
    },
    120_000,
  );
});
