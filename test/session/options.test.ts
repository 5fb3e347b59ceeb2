import { inspect } from 'node:util';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type BrowserUrlOptions,
  BYOP_PROTOCOLS,
  buildBrowserUrl,
  isConfigError,
  OPERATING_SYSTEMS,
  PROXY_POOLS,
  parseBrowserUrl,
  redactUrl,
} from '../../packages/cloud-browser/src/index.js';

const browser_url = 'wss://browser.test/';
const api_key = 'scp-test-0000000000000000000000000000000000';
const vault_key = btoa(String.fromCharCode(...Array.from({ length: 32 }, (_, i) => i * 7)));

function issuesOf(options: unknown) {
  try {
    buildBrowserUrl(options as BrowserUrlOptions);
  } catch (e) {
    if (isConfigError(e)) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

function query(options: Omit<BrowserUrlOptions, 'browser_url' | 'api_key'>) {
  return buildBrowserUrl({ browser_url, api_key, ...options }).searchParams;
}

afterEach(() => {
  delete process.env.CLOUD_API_KEY;
  delete process.env.CLOUD_BROWSER_URL;
});

describe('buildBrowserUrl accepts every valid option', () => {
  it.each<[string, Omit<BrowserUrlOptions, 'browser_url' | 'api_key'>, string]>([
    ['a timeout of 1800 seconds', { timeout: 1800 }, 'timeout=1800'],
    ['a timeout of 1 second', { timeout: 1 }, 'timeout=1'],
    ['languages as a list, in order', { languages: ['fr-FR', 'en-US', 'de'] }, 'languages=fr-FR%2Cen-US%2Cde'],
    ['languages as one comma-separated string, trimmed', { languages: ' en-US , fr ' }, 'languages=en-US%2Cfr'],
    ['one language', { languages: 'en' }, 'languages=en'],
    ...BYOP_PROTOCOLS.map(
      (p) =>
        [`a ${p} proxy`, { byop_proxy: `${p}://user:pa%40ss@proxy.test:1080` }, 'byop_proxy='] as [
          string,
          object,
          string,
        ],
    ),
    ['a vault with its key', { vault: 'Vault01', vault_key }, 'vault=Vault01'],
    ['VNC with a password', { enable_vnc: true, vnc_password: 'pw-1234' }, 'enable_vnc=true&vnc_password=pw-1234'],
    [
      'VNC without a password for the HITL networks',
      { enable_vnc: true, hitl_allowed_networks: ['10.0.0.0/8'] },
      'enable_vnc=true',
    ],
    [
      'RTC without a password for the HITL networks',
      { enable_rtc: true, hitl_allowed_networks: '10.0.0.0/8' },
      'enable_rtc=true',
    ],
    ['RTC with credentials', { enable_rtc: true, rtc_username: 'u', rtc_password: 'p' }, 'rtc_username=u'],
    ...PROXY_POOLS.map((v) => [`proxy_pool ${v}`, { proxy_pool: v }, `proxy_pool=${v}`] as [string, object, string]),
    ...OPERATING_SYSTEMS.map((v) => [`os ${v}`, { os: v }, `os=${v}`] as [string, object, string]),
    ['an explicit false', { debug: false }, 'debug=false'],
    ['extensions comma-joined', { extensions: ['a', 'b'] }, 'extensions=a%2Cb'],
    ['hitl networks as a string', { hitl_allowed_networks: '10.0.0.0/8,192.168.0.0/16' }, 'hitl_allowed_networks='],
    ['an http target URL', { target_url: 'http://127.0.0.1:8080/x' }, 'target_url=http'],
    ['unblock_timeout of 0', { unblock_timeout: 0 }, 'unblock_timeout=0'],
  ])('accepts %s', (_name, options, expected) => {
    expect(query(options).toString()).toContain(expected);
  });
});

describe('buildBrowserUrl refuses every invalid option, naming it', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['a timeout above 1800 seconds', { timeout: 1801 }, 'timeout'],
    ['a timeout of 3600 seconds', { timeout: 3600 }, 'timeout'],
    ['a timeout of zero', { timeout: 0 }, 'timeout'],
    ['a negative timeout', { timeout: -5 }, 'timeout'],
    ['a fractional timeout', { timeout: 1.5 }, 'timeout'],
    ['a timeout given as text', { timeout: '60' }, 'timeout'],
    ['four languages', { languages: ['a', 'b', 'c', 'd'] }, 'languages'],
    ['four languages in one string', { languages: 'a,b,c,d' }, 'languages'],
    ['an empty languages list', { languages: [] }, 'languages'],
    ['an empty languages string', { languages: '' }, 'languages'],
    ['a blank language entry', { languages: 'en,,fr' }, 'languages'],
    ['a language entry holding a comma', { languages: ['en,fr'] }, 'languages'],
    ['a socks4 proxy', { byop_proxy: 'socks4://u:p@h:1080' }, 'byop_proxy'],
    ['a proxy without a password', { byop_proxy: 'http://u@h:8080' }, 'byop_proxy'],
    ['a proxy without a user', { byop_proxy: 'http://h:8080' }, 'byop_proxy'],
    ['a proxy without a port', { byop_proxy: 'socks5://u:p@h' }, 'byop_proxy'],
    ['a proxy that is not a URL', { byop_proxy: 'not a url' }, 'byop_proxy'],
    ['a proxy with a path', { byop_proxy: 'http://u:p@h:8080/x' }, 'byop_proxy'],
    ['a vault without a key', { vault: 'v1' }, 'vault_key'],
    ['a vault key without a vault', { vault_key }, 'vault'],
    ['a vault name that is not alphanumeric', { vault: 'my-vault', vault_key }, 'vault'],
    ['a vault key of 31 bytes', { vault: 'v', vault_key: btoa('x'.repeat(31)) }, 'vault_key'],
    ['a vault key of 33 bytes', { vault: 'v', vault_key: btoa('x'.repeat(33)) }, 'vault_key'],
    ['a vault key that is not base64', { vault: 'v', vault_key: '!'.repeat(44) }, 'vault_key'],
    ['a VNC password without VNC', { vnc_password: 'pw' }, 'enable_vnc'],
    ['a VNC password with VNC off', { vnc_password: 'pw', enable_vnc: false }, 'enable_vnc'],
    ['an RTC user without RTC', { rtc_username: 'u' }, 'enable_rtc'],
    ['an RTC password without RTC', { rtc_password: 'p' }, 'enable_rtc'],
    ['VNC without a password or HITL networks', { enable_vnc: true }, 'vnc_password'],
    ['RTC without a password or HITL networks', { enable_rtc: true, rtc_username: 'u' }, 'rtc_password'],
    ['an extra value that is an object', { extra: { brand_new: { a: 1 } } }, 'extra.brand_new'],
    ['an extra value that is NaN', { extra: { brand_new: Number.NaN } }, 'extra.brand_new'],
    ['an unknown proxy pool', { proxy_pool: 'mobile' }, 'proxy_pool'],
    ['an unknown os', { os: 'beos' }, 'os'],
    ['a misspelt option', { timout: 60 }, 'timout'],
    ['a camelCase option', { autoClose: true }, 'autoClose'],
    ['a boolean given as text', { debug: 'yes' }, 'debug'],
    ['an empty session name', { session: '' }, 'session'],
    ['a target URL that is not http', { target_url: 'file:///etc/passwd' }, 'target_url'],
    ['extensions that are not a list of strings', { extensions: [1] }, 'extensions'],
    ['a lone surrogate', { session: 'a\ud800' }, 'session'],
  ])('refuses %s', (_name, options, option) => {
    const error = issuesOf({ browser_url, api_key, ...options });
    expect(error.issues.map((i) => i.option)).toContain(option);
    const issue = error.issues.find((i) => i.option === option);
    expect(issue?.message).toMatch(new RegExp(`\`${option}[\`:]`));
    expect(error.message).toContain(issue?.message);
  });

  it('reports every problem at once', () => {
    const error = issuesOf({
      browser_url,
      api_key,
      timeout: 9999,
      languages: 'a,b,c,d',
      byop_proxy: 'ftp://u:p@h:21',
      vault: 'v',
      vnc_password: 'x',
      rtc_username: 5,
      colour: 'red',
    });
    expect(new Set(error.issues.map((i) => i.option))).toEqual(
      new Set([
        'timeout',
        'languages',
        'byop_proxy',
        'vault_key',
        'enable_vnc',
        'rtc_username',
        'enable_rtc',
        'colour',
      ]),
    );
  });

  it('says what the limit is and what was given', () => {
    expect(issuesOf({ browser_url, api_key, timeout: 3600 }).issues[0]?.message).toBe(
      '`timeout` must be at most 1800 seconds (got 3600)',
    );
  });

  it('suggests the option a typo meant', () => {
    expect(issuesOf({ browser_url, api_key, languges: 'en' }).issues[0]?.message).toContain('did you mean `languages`');
  });

  it('lists the allowed proxy protocols', () => {
    const message = issuesOf({ browser_url, api_key, byop_proxy: 'socks4://u:p@h:1' }).message;
    for (const p of BYOP_PROTOCOLS) expect(message).toContain(p);
  });

  it('requires an API key and a browser URL, naming the environment variables', () => {
    const error = issuesOf({});
    expect(error.issues.map((i) => i.option).sort()).toEqual(['api_key', 'browser_url']);
    expect(error.message).toContain('CLOUD_API_KEY');
    expect(error.message).toContain('CLOUD_BROWSER_URL');
  });

  it.each([
    ['http://browser.test', 'ws:// or wss://'],
    ['wss://browser.test/?api_key=x', 'must not carry a query'],
    ['not a url', 'not a URL'],
  ])('refuses the browser URL %s', (url, text) => {
    const error = issuesOf({ browser_url: url, api_key });
    expect(error.issues[0]?.option).toBe('browser_url');
    expect(error.message).toContain(text);
  });

  it('refuses options that are not an object', () => {
    expect(issuesOf(null).issues.map((i) => i.option)).toContain('(options)');
  });
});

describe('extra: options newer than the library (D19)', () => {
  it('sends them after the known ones, as given, unvalidated', () => {
    const url = buildBrowserUrl({
      browser_url,
      api_key,
      timeout: 60,
      extra: { stealth_level: 3, brand_new: 'x y', flag: false },
    });
    expect(url.search).toBe(`?timeout=60&api_key=${api_key}&stealth_level=3&brand_new=x+y&flag=false`);
  });

  it('refuses an option the library knows given through extra, saying where it goes', () => {
    const error = issuesOf({ browser_url, api_key, extra: { timeout: 60 } });
    expect(error.issues).toEqual([
      { option: 'extra.timeout', message: '`timeout` is a known option: pass it as `timeout`, not in `extra`' },
    ]);
  });

  it('redacts the value of an extra whose name looks like a credential, wherever the URL is shown', () => {
    const url = buildBrowserUrl({ browser_url, api_key, extra: { session_token: 'tok-9f8e7d6c5b' } });
    expect(url.searchParams.get('session_token')).toBe('tok-9f8e7d6c5b');
    expect(redactUrl(url.href)).not.toContain('tok-9f8e7d6c5b');
    const error = issuesOf({ browser_url, api_key, timeout: 9999, extra: { session_token: 'tok-9f8e7d6c5b' } });
    expect(inspect(error, { depth: 5 })).not.toContain('tok-9f8e7d6c5b');
  });
});

describe('the query text follows D3', () => {
  it('writes booleans as true and false, and sends an explicit false', () => {
    const q = query({ debug: true, auto_close: false });
    expect(q.get('debug')).toBe('true');
    expect(q.get('auto_close')).toBe('false');
  });

  it('leaves out null and undefined options', () => {
    const q = query({ session: null, country: undefined, timeout: 60 });
    expect([...q.keys()]).toEqual(['timeout', 'api_key']);
  });

  it('leaves out an empty extensions list', () => {
    expect(query({ extensions: [] }).has('extensions')).toBe(false);
  });

  it('always sends api_key', () => {
    expect(query({}).get('api_key')).toBe(api_key);
  });

  it('keeps one parameter order whatever the order of the options', () => {
    const a = query({ timeout: 60, os: 'linux', debug: true, country: 'us' }).toString();
    const b = query({ country: 'us', debug: true, os: 'linux', timeout: 60 }).toString();
    expect(a).toBe(b);
    expect(a).toBe('os=linux&country=us&timeout=60&debug=true&api_key=scp-test-0000000000000000000000000000000000');
  });

  it('keeps the browser URL path', () => {
    expect(buildBrowserUrl({ browser_url: 'ws://127.0.0.1:9/cdp', api_key }).pathname).toBe('/cdp');
  });

  it('takes the key and URL from the environment', () => {
    process.env.CLOUD_API_KEY = 'env-key-1234';
    process.env.CLOUD_BROWSER_URL = 'ws://127.0.0.1:1234/';
    const url = buildBrowserUrl({ timeout: 5 });
    expect(url.host).toBe('127.0.0.1:1234');
    expect(url.searchParams.get('api_key')).toBe('env-key-1234');
  });

  it('prefers the options over the environment', () => {
    process.env.CLOUD_API_KEY = 'env-key-1234';
    expect(buildBrowserUrl({ browser_url, api_key: 'mine-5678' }).searchParams.get('api_key')).toBe('mine-5678');
  });
});

describe('parseBrowserUrl', () => {
  it('refuses unknown, repeated and malformed parameters, all at once', () => {
    try {
      parseBrowserUrl('ws://h/?timeout=abc&debug=yes&foo=1&os=linux&os=windows&timeout=5');
      expect.unreachable();
    } catch (e) {
      if (!isConfigError(e)) throw e;
      expect(e.issues.map((i) => i.option).sort()).toEqual(['debug', 'foo', 'os', 'timeout', 'timeout']);
    }
  });

  it('applies the same rules as the builder', () => {
    expect(() => parseBrowserUrl('ws://h/?timeout=1801')).toThrow(/`timeout` must be at most 1800/);
    expect(() => parseBrowserUrl('ws://h/?vnc_password=x')).toThrow(/needs `enable_vnc: true`/);
  });

  it('keeps unknown parameters as ignored when asked, as the emulator does (D19)', () => {
    expect(parseBrowserUrl('ws://h:1/?timeout=5&brand_new=1&other=x&brand_new=2', { unknown: 'keep' })).toEqual({
      browser_url: 'ws://h:1/',
      timeout: 5,
      ignored: ['brand_new', 'other'],
    });
  });

  it('does not require an API key', () => {
    expect(parseBrowserUrl('ws://h:1/?timeout=5')).toEqual({ browser_url: 'ws://h:1/', timeout: 5 });
  });

  const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 });
  const entry = fc
    .string({ unit: 'grapheme', minLength: 1, maxLength: 8 })
    .map((s) => s.replaceAll(',', '').trim())
    .filter((s) => s.length > 0);
  const bool = fc.boolean();
  const alnum = fc.stringMatching(/^[A-Za-z0-9]{1,12}$/);
  const proxy = fc
    .record({
      protocol: fc.constantFrom(...BYOP_PROTOCOLS),
      user: alnum,
      password: alnum,
      host: fc.constantFrom('proxy.test', '127.0.0.1', '[::1]'),
      port: fc.integer({ min: 1, max: 65535 }),
    })
    .map((p) => `${p.protocol}://${p.user}:${p.password}@${p.host}:${p.port}`);
  const options = fc
    .record(
      {
        proxy_pool: fc.constantFrom(...PROXY_POOLS),
        os: fc.constantFrom(...OPERATING_SYSTEMS),
        session: text,
        country: text,
        lang: text,
        languages: fc.array(entry, { minLength: 1, maxLength: 3 }),
        auto_close: bool,
        timeout: fc.integer({ min: 1, max: 1800 }),
        debug: bool,
        extensions: fc.array(entry, { minLength: 1, maxLength: 4 }),
        block_images: bool,
        block_styles: bool,
        block_fonts: bool,
        block_media: bool,
        screenshot: bool,
        resolution: text,
        target_url: fc.webUrl(),
        cache: bool,
        blacklist: bool,
        unblock: bool,
        unblock_timeout: fc.integer({ min: 0, max: 10_000 }),
        browser_brand: text,
        byop_proxy: proxy,
        enable_mcp: bool,
        solve_captcha: bool,
        vault: alnum,
        enable_vnc: bool,
        enable_rtc: bool,
        hitl_allowed_networks: fc.array(entry, { minLength: 1, maxLength: 4 }),
        api_key: text,
      },
      { requiredKeys: [] },
    )
    .chain((o) =>
      fc
        .record(
          {
            vault_key: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => btoa(String.fromCharCode(...b))),
            vnc_password: text,
            rtc_username: text,
            rtc_password: text,
          },
          { requiredKeys: ['vault_key'] },
        )
        .map((secrets) => {
          const out: Record<string, unknown> = { ...o };
          if (o.vault !== undefined) out.vault_key = secrets.vault_key;
          if (o.enable_vnc === true && secrets.vnc_password !== undefined) out.vnc_password = secrets.vnc_password;
          if (o.enable_rtc === true && secrets.rtc_username !== undefined) out.rtc_username = secrets.rtc_username;
          if (o.enable_rtc === true && secrets.rtc_password !== undefined) out.rtc_password = secrets.rtc_password;
          // D7: a view without a password is for the HITL networks only.
          const unguarded =
            (o.enable_vnc === true && out.vnc_password === undefined) ||
            (o.enable_rtc === true && out.rtc_password === undefined);
          if (unguarded && out.hitl_allowed_networks === undefined) out.hitl_allowed_networks = ['10.0.0.0/8'];
          return out;
        }),
    );

  it('gives back the options that built the URL, for any valid options', () => {
    fc.assert(
      fc.property(options, (o) => {
        const withKey = { api_key, ...o } as BrowserUrlOptions;
        const parsed = parseBrowserUrl(buildBrowserUrl({ browser_url, ...withKey }));
        expect(parsed).toEqual({ browser_url, ...withKey });
      }),
      { numRuns: 1500 },
    );
  });
});
