/**
 * The service's official SDK (npm `scrapfly-sdk`) drives the emulator's REST side: what it
 * does against the live service, it must be able to do here. It derives its REST host by
 * replacing `wss://`; given the emulator's `http://` address, it reaches it as it is.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { ScrapflyClient } from 'scrapfly-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { eventually, puppeteerDriver } from '../support/drivers.js';
import { type LoginSite, startLoginSite } from '../support/login-site.js';
import { listenLoopback } from '../support/loopback.js';

let emulator: Emulator;
let site: LoginSite;
let sdk: ScrapflyClient;

beforeAll(async () => {
  site = await startLoginSite();
  emulator = await startEmulator();
  sdk = new ScrapflyClient({ key: emulator.apiKey, cloudBrowserHost: emulator.apiUrl });
});
afterAll(async () => {
  await emulator.close();
  await site.close();
});

async function extensionZip(name: string): Promise<Buffer> {
  const z = new yazl.ZipFile();
  z.addBuffer(Buffer.from(JSON.stringify({ manifest_version: 3, name, version: '2.1' })), 'manifest.json');
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('the official SDK against the emulator’s REST side', () => {
  it('lists sessions and stops one; the connected Puppeteer session ends', async () => {
    const session = await puppeteerDriver.connect({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      session: 'sdkstop',
    });
    const listed = await sdk.cloudBrowserSessions();
    expect(listed.total).toBeGreaterThanOrEqual(1);
    expect(listed.sessions.find((s) => s.run_id === session.runId)).toMatchObject({ session: 'sdkstop' });
    await sdk.cloudBrowserSessionStop(session.runId as string);
    const closed = await session.closed;
    expect(closed.closeCode).toBe(1000);
    expect(closed.reason).toBe('ERR::BROWSER::SESSION_STOPPED: stopped through the API');
    expect(
      await eventually(
        () => puppeteerDriver.isConnected(session),
        (c) => !c,
      ),
    ).toBe(false);
    expect((await sdk.cloudBrowserSessions()).sessions.map((s) => s.run_id)).not.toContain(session.runId);
  });

  it('runs every vault call: create, list, get, update, items, rotate, delete', async () => {
    const { vault, key, message } = await sdk.cloudBrowserVaultCreate({
      name: 'SdkVault',
      description: 'from the SDK',
    });
    expect(key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(message).toContain('shown once');
    expect((await sdk.cloudBrowserVaultList()).vaults.map((v) => v.id)).toContain(vault.id);
    expect((await sdk.cloudBrowserVaultGet(vault.id)).vault).toMatchObject({ name: 'SdkVault', item_count: 0 });
    expect((await sdk.cloudBrowserVaultUpdate(vault.id, { description: 'changed' })).vault.description).toBe('changed');
    // The flat secret form the SDK documents.
    const { item } = await sdk.cloudBrowserVaultItemCreate(vault.id, key, {
      type: 'password',
      label: 'Login',
      origin: site.origin,
      username: 'ada',
      secret: { password: 'sdk-password-1' },
    });
    const totp = await sdk.cloudBrowserVaultItemCreate(vault.id, key, {
      type: 'totp',
      label: 'OTP',
      origin: site.origin,
      secret: { seed: 'JBSWY3DPEHPK3PXP', digits: 6 },
    });
    expect(totp.item.type).toBe('totp');
    const { items } = await sdk.cloudBrowserVaultItemList(vault.id);
    expect(items.map((i) => i.label).sort()).toEqual(['Login', 'OTP']);
    expect(JSON.stringify(items)).not.toContain('sdk-password-1');
    const updated = await sdk.cloudBrowserVaultItemUpdate(vault.id, item.id, {
      vaultKey: key,
      type: 'password',
      secret: { password: { password: 'sdk-password-2' } },
      label: 'Login 2',
    });
    expect(updated.item?.label).toBe('Login 2');
    const { key: rotated } = await sdk.cloudBrowserVaultRotate(vault.id, key);
    expect(rotated).not.toBe(key);
    await expect(sdk.cloudBrowserVaultRotate(vault.id, key)).rejects.toThrow(/401/);
    // The rotated key opens the vault for a session: the updated password is filled.
    const session = await puppeteerDriver.connect({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      vault: 'SdkVault',
      vault_key: rotated,
    });
    try {
      const page = await puppeteerDriver.newPage(session);
      await page.goto(`${site.origin}/login`);
      const value = await eventually(
        () => page.evaluate(() => (document.querySelector('input[type=password]') as HTMLInputElement).value),
        (v) => v !== '',
      );
      expect(value).toBe('sdk-password-2');
    } finally {
      await session.close();
    }
    expect((await sdk.cloudBrowserVaultItemDelete(vault.id, totp.item.id)).success).toBe(true);
    expect((await sdk.cloudBrowserVaultDelete(vault.id)).success).toBe(true);
    expect((await sdk.cloudBrowserVaultList()).vaults.map((v) => v.id)).not.toContain(vault.id);
    expect(JSON.stringify(emulator.stores())).not.toContain(rotated);
  });

  it('uploads an extension from a file and from a URL, lists, gets and deletes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdk-ext-'));
    const file = join(dir, 'tool.zip');
    writeFileSync(file, await extensionZip('SdkTool'));
    const uploaded = await sdk.cloudBrowserExtensionUpload(file);
    expect(uploaded).toMatchObject({
      is_update: false,
      extension: { name: 'SdkTool', version: '2.1', manifest_version: 3 },
    });
    const bytes = await extensionZip('FromUrl');
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/zip' }).end(bytes));
    const loopback = await listenLoopback(server);
    try {
      const fromUrl = await sdk.cloudBrowserExtensionUploadFromUrl(`http://127.0.0.1:${loopback.port}/from-url.zip`);
      expect(fromUrl.extension).toMatchObject({
        name: 'FromUrl',
        source: `http://127.0.0.1:${loopback.port}/from-url.zip`,
      });
    } finally {
      await loopback.close();
    }
    const { extensions, quota } = await sdk.cloudBrowserExtensionList();
    expect(extensions.map((e) => e.name).sort()).toEqual(['FromUrl', 'SdkTool']);
    expect(quota).toEqual({ used: 2, limit: 10 });
    const id = uploaded.extension.id as string;
    expect((await sdk.cloudBrowserExtensionGet(id)).extension).toMatchObject({ id, name: 'SdkTool' });
    for (const e of extensions) expect((await sdk.cloudBrowserExtensionDelete(e.id)).success).toBe(true);
    expect((await sdk.cloudBrowserExtensionList()).extensions).toEqual([]);
  });

  it('unblocks a URL: a session already there, which Puppeteer joins through ws_url', async () => {
    const result = await sdk.cloudBrowserUnblock({ url: `${site.origin}/login`, browser_timeout: 120 });
    expect(result.session_id).toEqual(expect.any(String));
    expect(result.run_id).toMatch(/^run-/);
    const browser = await puppeteer.connect({ browserWSEndpoint: result.ws_url, defaultViewport: null });
    try {
      const urls = (await browser.pages()).map((p) => p.url());
      expect(urls).toContain(`${site.origin}/login`);
    } finally {
      await browser.disconnect();
      await sdk.cloudBrowserSessionStop(result.run_id);
    }
  });
});
