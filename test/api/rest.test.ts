import { createHash, createVerify, generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import type { Page, Browser as PwBrowser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { CloudBrowserApi, isServiceError, type ServiceError } from '../../packages/cloud-browser/src/api/index.js';
import { isConfigError, isSessionClosedError } from '../../packages/cloud-browser/src/index.js';
import { base32Decode, totp } from '../../packages/emulator/src/browser-api/totp.js';
import { findChromium } from '../../packages/emulator/src/chromium.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { eventually, playwrightDriver } from '../support/drivers.js';
import { type LoginSite, startLoginSite } from '../support/login-site.js';
import { rejection } from '../support/rejection.js';
import { startSite } from '../support/site.js';

// RFC 6238 appendix B: the SHA1 seed "12345678901234567890", at T = 59 s.
const RFC_SEED = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const CLOCK = 59_000;

const bundledChromium = (await findChromium()) === join(tmpdir(), 'chromium');
let emulator: Emulator;
let site: LoginSite;
let api: CloudBrowserApi;

beforeAll(async () => {
  site = await startLoginSite();
  emulator = await startEmulator({ now: () => CLOCK });
  api = new CloudBrowserApi({ browserUrl: emulator.browserUrl, key: emulator.apiKey });
});
afterAll(async () => {
  await emulator.close();
  await site.close();
});

/** A zip of `files`, with optional Unix modes. */
function zip(files: Record<string, string | Buffer>, modes: Record<string, number> = {}): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files))
    z.addBuffer(Buffer.from(content), name, modes[name] ? { mode: modes[name] } : {});
  z.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    z.outputStream.on('data', (c: Buffer) => chunks.push(c));
    z.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

const manifest = (name = 'Marker') =>
  JSON.stringify({
    manifest_version: 3,
    name,
    version: '1.0.0',
    content_scripts: [{ matches: ['http://127.0.0.1/*'], js: ['mark.js'], run_at: 'document_end' }],
  });

describe('RFC 6238 one-time codes', () => {
  it.each([
    [59, '94287082', 'SHA1', '12345678901234567890'],
    [1111111109, '07081804', 'SHA1', '12345678901234567890'],
    [1234567890, '89005924', 'SHA1', '12345678901234567890'],
    [2000000000, '69279037', 'SHA1', '12345678901234567890'],
    [59, '46119246', 'SHA256', '12345678901234567890123456789012'],
    [1111111109, '68084774', 'SHA256', '12345678901234567890123456789012'],
    [59, '90693936', 'SHA512', '1234567890123456789012345678901234567890123456789012345678901234'],
    [20000000000, '47863826', 'SHA512', '1234567890123456789012345678901234567890123456789012345678901234'],
  ] as const)('at T = %i s gives %s (%s)', (seconds, code, algorithm, seed) => {
    expect(totp(Buffer.from(seed), seconds * 1000, { digits: 8, algorithm })).toBe(code);
  });

  it('decodes base32 seeds', () => {
    expect(base32Decode(RFC_SEED).toString()).toBe('12345678901234567890');
  });
});

describe('vaults (D21)', () => {
  it('creates a vault whose key is shown once and hidden from inspect, then lists, gets and renames it', async () => {
    const created = await api.vaults.create({ name: 'Shop1', description: 'test' });
    expect(created.key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.key, 'base64')).toHaveLength(32);
    expect(inspect(created)).not.toContain(created.key);
    expect(created.vault).toMatchObject({ name: 'Shop1', description: 'test', item_count: 0 });
    expect((await api.vaults.list()).vaults.map((v) => v.name)).toContain('Shop1');
    expect(await api.vaults.get(created.vault.id)).toMatchObject({ id: created.vault.id, name: 'Shop1' });
    expect((await api.vaults.update(created.vault.id, { name: 'Shop1b' })).vault.name).toBe('Shop1b');
    expect(JSON.stringify(await api.vaults.list())).not.toContain(created.key);
  });

  it('seals items so that the store holds no secret and no key, and rotation leaves the old key opening nothing', async () => {
    const { vault, key } = await api.vaults.create({ name: 'Sealed' });
    const secret = `pw-${randomBytes(8).toString('hex')}`;
    const { item } = await api.vaults.items.create(vault.id, key, {
      type: 'password',
      label: 'Shop',
      origin: site.origin,
      username: 'ada',
      secret: { password: secret },
    });
    expect(item).toMatchObject({ vault_id: vault.id, type: 'password', origin: site.origin, username: 'ada' });
    expect(Buffer.from(item.secret_blob, 'base64').length).toBeGreaterThan(28);
    const stored = JSON.stringify(emulator.stores());
    for (const text of [secret, key, Buffer.from(key, 'base64').toString('hex')]) expect(stored).not.toContain(text);
    const { key: next } = await api.vaults.rotate(vault.id, key);
    expect(next).not.toBe(key);
    const stale = (await rejection(api.vaults.rotate(vault.id, key))) as ServiceError;
    expect(stale).toMatchObject({ code: 'ERR::BROWSER::VAULT_KEY_INVALID', http_status_code: 401 });
    const added = await rejection(
      api.vaults.items.create(vault.id, key, {
        type: 'cookie',
        label: 'c',
        origin: site.origin,
        secret: { name: 'a', value: 'b' },
      }),
    );
    expect((added as ServiceError).code).toBe('ERR::BROWSER::VAULT_KEY_INVALID');
    // The new key opens everything: a session fills the password with it.
    const session = await playwrightDriver.connect({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      vault: 'Sealed',
      vault_key: next,
    });
    try {
      const page = (await playwrightDriver.newPage(session)) as unknown as Page;
      await page.goto(`${site.origin}/login`);
      await expect.poll(() => page.inputValue('input[type=password]')).toBe(secret);
    } finally {
      await session.close();
    }
    const withOld = await rejection(
      playwrightDriver.connect({
        browser_url: emulator.browserUrl,
        api_key: emulator.apiKey,
        vault: 'Sealed',
        vault_key: key,
      }),
    );
    expect((withOld as ServiceError).code).toBe('ERR::BROWSER::VAULT_KEY_INVALID');
    expect(JSON.stringify(emulator.stores())).not.toContain(next);
  });

  it('refuses a session whose vault does not exist', async () => {
    const error = await rejection(
      playwrightDriver.connect({
        browser_url: emulator.browserUrl,
        api_key: emulator.apiKey,
        vault: 'NoSuchVault',
        vault_key: randomBytes(32).toString('base64'),
      }),
    );
    expect((error as ServiceError).code).toBe('ERR::BROWSER::VAULT_NOT_FOUND');
  });

  it('changes items (a new secret needs the key), lists them without plaintext and deletes them', async () => {
    const { vault, key } = await api.vaults.create({ name: 'Items' });
    const { item } = await api.vaults.items.create(vault.id, key, {
      type: 'totp',
      label: 'OTP',
      origin: site.origin,
      secret: { secret: RFC_SEED },
    });
    expect((await api.vaults.items.update(vault.id, item.id, { label: 'OTP 2' })).item?.label).toBe('OTP 2');
    const keyless = await rejection(
      api.vaults.items.update(vault.id, item.id, { type: 'totp', secret: { secret: 'JBSWY3DPEHPK3PXP' } }),
    );
    expect(isConfigError(keyless) && keyless.message).toContain('`vaultKey` must be the base64 key');
    await api.vaults.items.update(vault.id, item.id, { type: 'totp', secret: { secret: 'JBSWY3DPEHPK3PXP' } }, key);
    const items = await api.vaults.items.list(vault.id);
    expect(items.map((i) => i.label)).toEqual(['OTP 2']);
    expect(JSON.stringify(items)).not.toContain('JBSWY3DPEHPK3PXP');
    expect(await api.vaults.items.delete(vault.id, item.id)).toMatchObject({ success: true });
    expect(await api.vaults.items.list(vault.id)).toEqual([]);
    expect(await api.vaults.delete(vault.id)).toMatchObject({ success: true });
    expect(((await rejection(api.vaults.get(vault.id))) as ServiceError).http_status_code).toBe(404);
  });

  it('refuses a bad item before asking, naming the field, and never echoes the key', async () => {
    const key = randomBytes(32).toString('base64');
    const error = await rejection(
      api.vaults.items.create('vault_x', key, {
        type: 'password',
        label: '',
        origin: 'https://shop.test/path',
        secret: { password: '' },
      }),
    );
    expect(isConfigError(error)).toBe(true);
    const text = inspect(error, { depth: 5 });
    expect(text).toContain('`label` must not be empty');
    expect(text).toContain('`origin` must be an origin');
    expect(text).not.toContain(key);
    const wrongKey = await rejection(api.vaults.rotate('vault_x', 'not-a-key'));
    expect(inspect(wrongKey)).not.toContain('not-a-key');
  });
});

describe('a session with a vault uses its credentials on their origins only', () => {
  let vaultKey: string;
  let credentialId: Buffer;
  let publicKey: import('node:crypto').KeyObject;
  const password = `s3cret-${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    const created = await api.vaults.create({ name: 'Inject' });
    vaultKey = created.key;
    const id = created.vault.id;
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    publicKey = keys.publicKey;
    credentialId = randomBytes(16);
    const add = (item: Parameters<typeof api.vaults.items.create>[2]) => api.vaults.items.create(id, vaultKey, item);
    await add({ type: 'password', label: 'login', origin: site.origin, username: 'ada', secret: { password } });
    await add({ type: 'cookie', label: 'c', origin: site.origin, secret: { name: 'sid', value: 'cookie-value-1' } });
    await add({ type: 'totp', label: 'otp', origin: site.origin, secret: { secret: RFC_SEED, digits: 8 } });
    await add({
      type: 'passkey',
      label: 'pk',
      origin: site.otherOrigin,
      secret: {
        credentialId: credentialId.toString('base64url'),
        privateKey: (keys.privateKey.export({ format: 'der', type: 'pkcs8' }) as Buffer).toString('base64'),
        userHandle: Buffer.from('ada').toString('base64'),
      },
    });
  });

  it('sends the cookie on the first request, fills the login form and the one-time code, not elsewhere', async () => {
    const session = await playwrightDriver.connect({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      vault: 'Inject',
      vault_key: vaultKey,
      target_url: `${site.origin}/cookie`,
    });
    try {
      expect(site.cookies.get('/cookie')).toBe('sid=cookie-value-1');
      const page = (await playwrightDriver.newPage(session)) as unknown as Page;
      await page.goto(`${site.origin}/login`);
      await expect.poll(() => page.inputValue('input[type=password]')).toBe(password);
      expect(await page.inputValue('input[name=username]')).toBe('ada');
      await page.goto(`${site.origin}/otp`);
      // The emulator's clock is at RFC 6238's T = 59 s.
      await expect.poll(() => page.inputValue('input[name=code]')).toBe('94287082');
      await page.goto(`${site.otherOrigin}/login`);
      await page.waitForTimeout(300);
      expect(await page.inputValue('input[type=password]')).toBe('');
      expect(await page.inputValue('input[name=username]')).toBe('');
    } finally {
      await session.close();
    }
    expect(JSON.stringify(emulator.stores())).not.toContain(password);
  });

  it('signs a WebAuthn assertion with the vault’s passkey, verifiable with its public key', async () => {
    const session = await playwrightDriver.connect({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      vault: 'Inject',
      vault_key: vaultKey,
    });
    try {
      const page = (await playwrightDriver.newPage(session)) as unknown as Page;
      await page.goto(`${site.otherOrigin}/webauthn`);
      const challenge = randomBytes(32);
      const result = await page.evaluate(
        async ({ challenge, id }) => {
          const b = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
          const cred = (await navigator.credentials.get({
            publicKey: {
              challenge: b(challenge),
              rpId: 'localhost',
              allowCredentials: [{ type: 'public-key', id: b(id) }],
              userVerification: 'preferred',
            },
          })) as PublicKeyCredential;
          const r = cred.response as AuthenticatorAssertionResponse;
          const enc = (buf: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(buf)));
          return {
            id: enc(cred.rawId),
            authenticatorData: enc(r.authenticatorData),
            clientDataJSON: enc(r.clientDataJSON),
            signature: enc(r.signature),
          };
        },
        { challenge: challenge.toString('base64'), id: credentialId.toString('base64') },
      );
      expect(result.id).toBe(credentialId.toString('base64'));
      const clientData = Buffer.from(result.clientDataJSON, 'base64');
      expect(JSON.parse(clientData.toString())).toMatchObject({ type: 'webauthn.get', origin: site.otherOrigin });
      const signed = Buffer.concat([
        Buffer.from(result.authenticatorData, 'base64'),
        createHash('sha256').update(clientData).digest(),
      ]);
      expect(createVerify('sha256').update(signed).verify(publicKey, Buffer.from(result.signature, 'base64'))).toBe(
        true,
      );
    } finally {
      await session.close();
    }
  });
});

describe('sessions (D20)', () => {
  it('lists every live session of the key, named or not, and stops one by name: its socket closes with 1000', async () => {
    const named = await playwrightDriver.connect({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      session: 'listed1',
      vnc_password: 'vnc-pw-listed',
      enable_vnc: true,
    });
    const plain = await playwrightDriver.connect({ browser_url: emulator.browserUrl, api_key: emulator.apiKey });
    try {
      const { sessions, total } = await api.sessions.list();
      expect(total).toBe(sessions.length);
      const byRun = new Map(sessions.map((s) => [s.run_id, s]));
      expect(byRun.get(named.runId ?? '')).toMatchObject({ session: 'listed1', auto_close: true });
      expect(byRun.get(plain.runId ?? '')).toMatchObject({ session: null });
      expect(byRun.get(named.runId ?? '')?.options).toMatchObject({ vnc_password: '***', api_key: '***' });
      expect(Date.parse(byRun.get(named.runId ?? '')?.started_at ?? '')).toBeGreaterThan(0);
      expect(JSON.stringify(sessions)).not.toContain('vnc-pw-listed');
      expect(await api.sessions.stop('listed1')).toMatchObject({ success: true, run_id: named.runId });
      const closed = await named.closed;
      expect(isSessionClosedError(closed) && [closed.closeCode, closed.reason]).toEqual([
        1000,
        'ERR::BROWSER::SESSION_STOPPED: stopped through the API',
      ]);
      await eventually(
        () => (named.browser as PwBrowser).isConnected(),
        (c) => !c,
      );
      expect((await api.sessions.list()).sessions.map((s) => s.run_id)).not.toContain(named.runId);
      expect(((await rejection(api.sessions.stop('listed1'))) as ServiceError).http_status_code).toBe(404);
    } finally {
      await named.close().catch(() => {});
      await plain.close();
    }
  });
});

describe('extensions (D22)', () => {
  it('uploads a zip and a crx (same name: an update), lists, gets and deletes them', async () => {
    const bytes = await zip({
      'manifest.json': manifest('Marker'),
      'mark.js': 'document.documentElement.dataset.marked = "yes";',
    });
    const first = await api.extensions.upload(bytes, { filename: 'marker.zip' });
    expect(first).toMatchObject({
      is_update: false,
      extension: { name: 'Marker', version: '1.0.0', manifest_version: 3 },
    });
    // A CRX3 header before the same zip.
    const header = Buffer.from('fake-proto-header');
    const crx = Buffer.concat([Buffer.from('Cr24'), u32(3), u32(header.length), header, bytes]);
    const second = await api.extensions.upload(crx, { filename: 'marker.crx' });
    expect(second).toMatchObject({ is_update: true, extension: { id: first.extension.id } });
    expect((await api.extensions.list()).quota).toMatchObject({ used: 1, limit: 10 });
    expect(await api.extensions.get(first.extension.id)).toMatchObject({ name: 'Marker' });
    expect(await api.extensions.delete(first.extension.id)).toMatchObject({ success: true });
    expect((await api.extensions.list()).extensions).toEqual([]);
  });

  it.each([
    ['no manifest', async () => zip({ 'a.js': '1' }), 'no manifest.json'],
    [
      'a manifest without a version',
      async () => zip({ 'manifest.json': '{"manifest_version":3,"name":"x"}' }),
      'needs a version',
    ],
    [
      'manifest version 1',
      async () => zip({ 'manifest.json': '{"manifest_version":1,"name":"x","version":"1"}' }),
      'manifest_version 2 or 3',
    ],
    [
      'a path out of the folder',
      async () => {
        const z = await zip({ 'manifest.json': manifest(), 'aa/evil.js': 'x' });
        return Buffer.from(z.toString('latin1').replaceAll('aa/evil.js', '../evil.js'), 'latin1');
      },
      'the archive is refused',
    ],
    [
      'a symbolic link',
      async () => zip({ 'manifest.json': manifest(), link: '/etc/passwd' }, { link: 0o120777 }),
      'symbolic link',
    ],
    [
      'an archive inflating past 50 MiB',
      async () => zip({ 'manifest.json': manifest(), 'big.bin': Buffer.alloc(51 << 20) }),
      'past 50 MiB',
    ],
    ['bytes that are not a zip', async () => Buffer.from('not a zip at all'), 'not a zip'],
  ])('refuses %s with a clear 400', async (_name, make, text) => {
    const error = (await rejection(api.extensions.upload(await make(), { filename: 'bad.zip' }))) as ServiceError;
    expect(isServiceError(error)).toBe(true);
    expect(error).toMatchObject({ http_status_code: 400, code: 'ERR::BROWSER::INVALID_EXTENSION' });
    expect(error.message).toContain(text);
  });

  it('starts the session’s Chromium with the uploaded extensions, and only those', async () => {
    const bytes = await zip({
      'manifest.json': manifest('Runner'),
      'mark.js': 'document.documentElement.dataset.marked = "yes";',
    });
    const { extension } = await api.extensions.upload(bytes, { filename: 'runner.zip' });
    const session = await playwrightDriver.connect({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      extensions: [extension.id],
    });
    try {
      const pid = emulator.sessions().find((s) => s.runId === session.runId)?.pid;
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      // Debian's wrapper adds an empty `--load-extension=` first; Chromium takes the last one.
      const load = args
        .filter((a) => a.startsWith('--load-extension='))
        .at(-1)
        ?.slice('--load-extension='.length);
      expect(load).toMatch(/cloud-browser-ext-/);
      expect(args).toContain(`--disable-extensions-except=${load}`);
      expect(JSON.parse(readFileSync(join(load as string, 'manifest.json'), 'utf8')).name).toBe('Runner');
    } finally {
      await session.close();
      await api.extensions.delete(extension.id);
    }
  });

  // The `@sparticuz/chromium` fallback (unpacked as <tmpdir>/chromium) loads no extension at all:
  // see the README's fidelity table. Debian's or Google's Chromium does.
  it.skipIf(bundledChromium)('runs the extension’s content script on a 127.0.0.1 page', async () => {
    const site = await startSite();
    const { extension } = await api.extensions.upload(
      await zip({
        'manifest.json': manifest('Painter'),
        'mark.js': 'document.documentElement.dataset.marked = "yes";',
      }),
      { filename: 'painter.zip' },
    );
    const session = await playwrightDriver.connect({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      extensions: [extension.id],
    });
    try {
      const page = (await playwrightDriver.newPage(session)) as unknown as Page;
      await page.goto(site.url);
      await page.waitForFunction(() => document.documentElement.dataset.marked === 'yes', undefined, {
        timeout: 10_000,
      });
      expect(await page.evaluate(() => document.documentElement.dataset.marked)).toBe('yes');
    } finally {
      await session.close();
      await api.extensions.delete(extension.id);
      await site.close();
    }
  });

  it('refuses a session naming an extension that was never uploaded', async () => {
    const error = (await rejection(
      playwrightDriver.connect({
        browser_url: emulator.browserUrl,
        api_key: emulator.apiKey,
        extensions: ['ext_nope'],
      }),
    )) as ServiceError;
    expect(error.code).toBe('ERR::BROWSER::EXTENSION_NOT_FOUND');
  });
});

describe('unblock (D24)', () => {
  it('opens a session already at the URL, which connectPlaywright joins through ws_url', async () => {
    const result = await api.unblock({ url: `${site.origin}/login`, browser_timeout: 120 });
    expect(result.run_id).toMatch(/^run-/);
    expect(inspect(result)).not.toContain(emulator.apiKey);
    const session = await playwrightDriver.connect(result as never);
    try {
      expect(session.runId).toBe(result.run_id);
      const pages = (session.browser as PwBrowser).contexts()[0]?.pages() ?? [];
      expect(pages.map((p) => p.url())).toContain(`${site.origin}/login`);
    } finally {
      await session.close();
    }
  });

  it('refuses a URL that is not http(s) before asking, and one off this machine', async () => {
    expect(isConfigError(await rejection(api.unblock({ url: 'file:///etc/passwd' })))).toBe(true);
    const away = (await rejection(api.unblock({ url: 'https://example.com/' }))) as ServiceError;
    expect(away).toMatchObject({ http_status_code: 400, code: 'ERR::BROWSER::INVALID_REQUEST' });
    expect(away.message).toContain('on this machine only');
  });
});

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

describe('no vault key reaches an error, a log or the emulator’s stores, on any vault path', () => {
  function everything(e: unknown): string {
    const parts = [String(e), inspect(e, { depth: Number.POSITIVE_INFINITY, showHidden: true })];
    for (let c: unknown = e; c instanceof Error; c = c.cause) parts.push(c.message, c.stack ?? '', inspect(c.cause));
    try {
      parts.push(JSON.stringify(e));
    } catch {}
    return parts.join('\n');
  }

  it('keeps the key out of a wrong-key rotation, a bad item, a refused session and the vault records', async () => {
    const { vault, key } = await api.vaults.create({ name: 'Leak' });
    const wrong = randomBytes(32).toString('base64');
    const secretPassword = 'leak-password-77';
    const outputs: unknown[] = [
      await rejection(api.vaults.rotate(vault.id, wrong)),
      await rejection(api.vaults.rotate('vault_unknown', key)),
      await rejection(
        api.vaults.items.create(vault.id, key, {
          type: 'password',
          label: 'x',
          origin: 'not an origin',
          secret: { password: secretPassword },
        }),
      ),
      await rejection(
        api.vaults.items.create(vault.id, wrong, {
          type: 'password',
          label: 'x',
          origin: site.origin,
          secret: { password: secretPassword },
        }),
      ),
      await rejection(
        api.vaults.items.update(
          vault.id,
          'item_unknown',
          { type: 'password', secret: { password: secretPassword } },
          key,
        ),
      ),
      await rejection(
        playwrightDriver.connect({
          browser_url: emulator.browserUrl,
          api_key: emulator.apiKey,
          vault: 'Leak',
          vault_key: wrong,
        }),
      ),
      await api.vaults.list(),
      await api.vaults.get(vault.id),
      await api.vaults.rotate(vault.id, key),
    ];
    const text = outputs.map(everything).join('\n') + JSON.stringify(emulator.stores());
    for (const secret of [key, wrong, secretPassword, encodeURIComponent(key)]) expect(text).not.toContain(secret);
  });
});
