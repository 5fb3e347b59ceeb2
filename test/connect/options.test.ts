import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CloudBrowserSession } from '../../packages/cloud-browser/src/connect/session.js';
import type { BrowserUrlOptions } from '../../packages/cloud-browser/src/index.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { drivers, eventually, playwrightDriver } from '../support/drivers.js';
import { startHttpProxy, startSocksProxy, type TestProxy } from '../support/proxies.js';
import { type Site, startSite } from '../support/site.js';

let emulator: Emulator;
let site: Site;
const open: CloudBrowserSession<unknown>[] = [];

beforeAll(async () => {
  emulator = await startEmulator();
  site = await startSite();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  site.requests.length = 0;
});
afterAll(async () => {
  await emulator.close();
  await site.close();
});

describe.each(drivers)('options honoured by the emulator, through $name', (driver) => {
  const connect = async (options: BrowserUrlOptions = {}) => {
    const s = await driver.connect({ browser_url: emulator.browserUrl, api_key: emulator.apiKey, ...options });
    open.push(s);
    return s;
  };

  it('ends the session after `timeout` seconds with a close frame', async () => {
    // Long enough for the library to attach on a busy machine: the clock runs from the session's start.
    const session = await connect({ timeout: 3 });
    const closed = await session.closed;
    expect(closed.closeCode).toBe(1000);
    expect(closed.reason).toContain('ERR::BROWSER::SESSION_TIMEOUT');
    expect(
      await eventually(
        () => emulator.sessions().some((s) => s.runId === session.runId),
        (v) => !v,
      ),
    ).toBe(false);
  });

  it('applies `languages` to navigator.languages and a weighted Accept-Language', async () => {
    const session = await connect({ languages: ['fr-FR', 'en-US', 'de'] });
    const page = await driver.newPage(session);
    await page.goto(site.url);
    expect(await page.evaluate(() => [navigator.language, ...navigator.languages])).toEqual([
      'fr-FR',
      'fr-FR',
      'en-US',
      'de',
    ]);
    expect(site.requests.at(-1)?.headers['accept-language']).toBe('fr-FR,en-US;q=0.9,de;q=0.8');
  });

  it('applies `lang` to the browser language', async () => {
    const session = await connect({ lang: 'de-DE' });
    const page = await driver.newPage(session);
    await page.goto(site.url);
    expect(await page.evaluate(() => [navigator.language, Intl.DateTimeFormat().resolvedOptions().locale])).toEqual([
      'de-DE',
      'de-DE',
    ]);
    expect(site.requests.at(-1)?.headers['accept-language']).toBe('de-DE');
  });

  it('sizes the window from `resolution`', async () => {
    const session = await connect({ resolution: '1024x640' });
    const page = await driver.newPage(session);
    await page.goto(site.url);
    expect(await page.evaluate(() => [window.innerWidth, window.innerHeight])).toEqual([1024, 640]);
  });

  it('opens `target_url` as the first page', async () => {
    const session = await connect({ target_url: `${site.origin}/tall` });
    const [first] = await driver.pages(session);
    expect(first?.url()).toBe(`${site.origin}/tall`);
    expect(await first?.title()).toBe('Tall');
    expect(site.paths()).toContain('/tall');
  });

  it('keeps a named session with `auto_close: false` for the next connection, cookies and all', async () => {
    const options = { session: `keep-${driver.name}`, auto_close: false } as const;
    const first = await connect(options);
    const page = await driver.newPage(first);
    await page.goto(`${site.origin}/set-cookie`);
    await first.disconnect();
    open.splice(open.indexOf(first), 1);
    expect(emulator.sessions().map((s) => s.runId)).toContain(first.runId);
    const again = await connect(options);
    expect(again.runId).toBe(first.runId);
    const page2 = await driver.newPage(again);
    await page2.goto(site.url);
    expect(await page2.evaluate(() => document.cookie)).toBe('flavour=oatmeal');
  });

  it('answers page.title() at once on a rejoined named session, 20 times in a row', async () => {
    const options = { session: `rejoin-${driver.name}`, auto_close: false } as const;
    const first = await connect(options);
    const page = await driver.newPage(first);
    await page.goto(site.url);
    await first.disconnect();
    open.splice(open.indexOf(first), 1);
    const titles: (string | undefined)[] = [];
    for (let i = 0; i < 20; i++) {
      const again = await driver.connect({ browser_url: emulator.browserUrl, api_key: emulator.apiKey, ...options });
      const rejoined = (await driver.pages(again)).find((p) => p.url() === site.url);
      titles.push(await rejoined?.title());
      await again.disconnect();
    }
    expect(titles).toEqual(Array(20).fill('Hello from the site'));
    await (await connect(options)).close();
  }, 60_000);

  it('ends a session when its client leaves unless `auto_close` is false', async () => {
    const session = await connect({ session: `gone-${driver.name}` });
    await session.disconnect();
    expect(
      await eventually(
        () => emulator.sessions().some((s) => s.runId === session.runId),
        (v) => !v,
      ),
    ).toBe(false);
  });
});

describe('resource blocking', () => {
  const all = ['/style.css', '/font.woff2', '/image.png', '/video.mp4', '/audio.mp3'];

  async function loadAssets(options: BrowserUrlOptions): Promise<string[]> {
    const session = await playwrightDriver.connect({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      ...options,
    });
    open.push(session);
    const page = await playwrightDriver.newPage(session);
    await page.goto(`${site.origin}/assets`);
    await new Promise((r) => setTimeout(r, 300));
    return site.paths();
  }

  it('loads every asset of the test page when nothing is blocked', async () => {
    const paths = await loadAssets({});
    for (const p of all) expect(paths).toContain(p);
  });

  it.each([
    ['block_images', ['/image.png']],
    ['block_styles', ['/style.css']],
    ['block_fonts', ['/font.woff2']],
    ['block_media', ['/video.mp4', '/audio.mp3']],
  ])('%s keeps those resources from loading, and only those', async (option, blocked) => {
    const paths = await loadAssets({ [option]: true });
    for (const p of all) {
      if (blocked.includes(p)) expect(paths).not.toContain(p);
      else if (p !== '/font.woff2' || option !== 'block_styles') expect(paths).toContain(p);
    }
  });
});

describe('byop_proxy', () => {
  let proxies: TestProxy[] = [];
  afterEach(async () => {
    await Promise.all(proxies.map((p) => p.close()));
    proxies = [];
  });

  it.each([
    ['an http', startHttpProxy],
    ['a socks5', startSocksProxy],
  ])('sends the traffic through %s proxy with its credentials', async (_name, start) => {
    const proxy = await start('alice', 's3cret-pw');
    proxies.push(proxy);
    for (const driver of drivers) {
      const session = await driver.connect({
        browser_url: emulator.browserUrl,
        api_key: emulator.apiKey,
        byop_proxy: proxy.url('alice', 's3cret-pw'),
      });
      open.push(session);
      const page = await driver.newPage(session);
      await page.goto(site.url);
      expect(await page.title()).toBe('Hello from the site');
    }
    expect(proxy.tunnels).toContain(new URL(site.origin).host);
    expect(proxy.refused).toBe(0);
  });

  it('is refused by the proxy with wrong credentials, and the page does not load', async () => {
    const proxy = await startSocksProxy('alice', 's3cret-pw');
    proxies.push(proxy);
    const session = await playwrightDriver.connect({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      byop_proxy: proxy.url('alice', 'wrong-pw'),
    });
    open.push(session);
    const page = await playwrightDriver.newPage(session);
    await expect(page.goto(site.url)).rejects.toThrow();
    expect(proxy.refused).toBeGreaterThan(0);
    expect(proxy.tunnels).toEqual([]);
  });
});

describe('the emulator records what each session received', () => {
  it('lists the options with every secret redacted, in sessions() and over HTTP', async () => {
    const session = await playwrightDriver.connect({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      enable_vnc: true,
      vnc_password: 'vnc-secret-99',
      country: 'fr',
      solve_captcha: true,
    });
    open.push(session);
    const mine = emulator.sessions().find((s) => s.runId === session.runId);
    expect(mine?.options).toMatchObject({ api_key: '***', vnc_password: '***', country: 'fr', solve_captcha: true });
    const listed = (await (await fetch(`${emulator.apiUrl}/emulator/sessions?key=${emulator.apiKey}`)).json()) as {
      runId: string;
    }[];
    const text = JSON.stringify(listed);
    // Without the key, or with a wrong one, nothing is listed.
    for (const query of ['', '?key=wrong']) {
      const refused = await fetch(`${emulator.apiUrl}/emulator/sessions${query}`);
      expect(refused.status).toBe(401);
      expect(await refused.text()).not.toContain(session.runId);
    }
    expect(listed.map((s) => s.runId)).toContain(session.runId);
    expect(text).not.toContain(emulator.apiKey);
    expect(text).not.toContain('vnc-secret-99');
  });

  it('accepts query parameters newer than itself, honours nothing of them and lists them as ignored (D19)', async () => {
    const session = await playwrightDriver.connect({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      timeout: 300,
      extra: { stealth_level: 3, brand_new_flag: true },
    });
    open.push(session);
    const mine = emulator.sessions().find((s) => s.runId === session.runId);
    expect(mine?.ignored).toEqual(['stealth_level', 'brand_new_flag']);
    expect(mine?.options).toEqual({ browser_url: expect.any(String), timeout: 300, api_key: '***' });
    const page = await playwrightDriver.newPage(session);
    expect(await page.evaluate(() => 6 * 7)).toBe(42);
  });
});
