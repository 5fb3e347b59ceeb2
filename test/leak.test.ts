import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  buildBrowserUrl,
  ConfigError,
  ConnectionError,
  parseBrowserUrl,
  redact,
  redactUrl,
  ServiceError,
  TimeoutError,
  vncCredentials,
} from '../packages/cloud-browser/src/index.js';

// Values never passed to registerSecret by this file before they are thrown, so the
// patterns themselves are under test, not only the registry of known secrets.
const SECRETS = {
  api_key: 'ak-LEAK-4f1d9c2b7e',
  vault_key: btoa('LEAKLEAKLEAKLEAKLEAKLEAKLEAKLEAK'),
  vnc_password: 'vnc-LEAK-93b1',
  rtc_password: 'rtc-LEAK-5a7c',
  proxy_password: 'proxyLEAK77',
} as const;

function everything(e: unknown): string {
  const parts = [String(e), inspect(e, { depth: Number.POSITIVE_INFINITY, showHidden: true })];
  if (e instanceof Error) {
    parts.push(e.message, e.stack ?? '');
    let cause: unknown = e.cause;
    while (cause !== undefined) {
      parts.push(inspect(cause, { depth: Number.POSITIVE_INFINITY, showHidden: true }));
      cause = cause instanceof Error ? cause.cause : undefined;
    }
  }
  try {
    parts.push(JSON.stringify(e));
  } catch {}
  return parts.join('\n');
}

function expectClean(text: string) {
  for (const [name, secret] of Object.entries(SECRETS)) {
    expect(text, name).not.toContain(secret);
    expect(text, name).not.toContain(encodeURIComponent(secret));
  }
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

const url = `wss://browser.test/?api_key=${SECRETS.api_key}&vault_key=${encodeURIComponent(SECRETS.vault_key)}&vnc_password=${SECRETS.vnc_password}&rtc_password=${SECRETS.rtc_password}`;
const proxy = `socks5://user:${SECRETS.proxy_password}@proxy.test`;

describe('no secret reaches a message, stack, cause, inspect or JSON', () => {
  it.each<[string, () => unknown]>([
    [
      'invalid session options holding every secret',
      () =>
        buildBrowserUrl({
          browser_url: 'wss://browser.test',
          api_key: SECRETS.api_key,
          vault_key: SECRETS.vault_key,
          vnc_password: SECRETS.vnc_password,
          rtc_password: SECRETS.rtc_password,
          byop_proxy: proxy,
          timeout: 99999,
        }),
    ],
    [
      'secrets of the wrong shape',
      () =>
        buildBrowserUrl({
          browser_url: 'wss://browser.test',
          api_key: SECRETS.api_key,
          vault: 'v',
          vault_key: `${SECRETS.vault_key}x`,
          byop_proxy: `ftp://u:${SECRETS.proxy_password}@h:21/path`,
        }),
    ],
    ['a browser URL with a key in its query', () => buildBrowserUrl({ browser_url: url, api_key: SECRETS.api_key })],
    ['a URL with bad values beside its secrets', () => parseBrowserUrl(`${url}&timeout=1e9&bogus=1`)],
    [
      'bad VNC input',
      () => vncCredentials({ browserUrl: url, runId: '', salt: 'x', vncPassword: SECRETS.vnc_password }),
    ],
    [
      'a service error whose message quotes the secrets',
      () => {
        throw ServiceError.generate(
          {
            code: 'ERR::SESSION::X',
            message: `failed ${url} with "vnc_password": "${SECRETS.vnc_password}" via ${proxy}`,
            reason: `key=${SECRETS.api_key}`,
          },
          { status: 500 },
        );
      },
    ],
    [
      'a service error caused by an error chain holding the URL',
      () => {
        const inner = new Error(`connect ECONNREFUSED ${url}`, { cause: new Error(`proxy ${proxy}`) });
        throw ServiceError.generate({ code: 'X', message: 'upstream' }, { status: 502, cause: inner });
      },
    ],
    [
      'a config error built by hand',
      () => {
        throw new ConfigError('x', [{ option: 'api_key', message: `bad api_key=${SECRETS.api_key}` }]);
      },
    ],
    [
      'a timeout error with a URL',
      () => {
        throw new TimeoutError(`timed out on ${url}`, { cause: { url } });
      },
    ],
    [
      'a connection error caused by a string',
      () => {
        throw new ConnectionError('refused', { cause: `GET ${url}` });
      },
    ],
  ])('%s', (_name, fn) => {
    const e = thrown(fn);
    expectClean(everything(e));
  });
});

describe('redact', () => {
  it.each([
    [`wss://h/?api_key=${SECRETS.api_key}&timeout=5`, 'wss://h/?api_key=***&timeout=5'],
    [`https://h/crawl?key=${SECRETS.api_key}`, 'https://h/crawl?key=***'],
    [`https://h/crawl?monkey=banana&key=${SECRETS.api_key}`, 'https://h/crawl?monkey=banana&key=***'],
    [proxy, 'socks5://user:***@proxy.test'],
    [`{"api_key":"${SECRETS.api_key}","timeout":5}`, '{"api_key":"***","timeout":5}'],
    [`{ vnc_password: '${SECRETS.vnc_password}' }`, "{ vnc_password: '***' }"],
    [
      `next=${encodeURIComponent(`wss://h/?a=1&api_key=${SECRETS.api_key}`)}`,
      `next=${encodeURIComponent('wss://h/?a=1&api_key=')}***`,
    ],
  ])('scrubs %s', (input, output) => {
    expect(redact(input)).toBe(output);
  });

  it('leaves ordinary text alone', () => {
    expect(redact('monkey=banana keyboard: "qwerty" https://h/path?x=1')).toBe(
      'monkey=banana keyboard: "qwerty" https://h/path?x=1',
    );
  });

  it('scrubs extra values wherever they appear', () => {
    expect(redact(`salted 1234abcd-${SECRETS.vnc_password}`, [SECRETS.vnc_password])).toBe('salted 1234abcd-***');
  });

  it('redacts a URL object', () => {
    expect(redactUrl(new URL(url))).not.toContain(SECRETS.api_key);
  });

  it('scrubs a secret seen by the builder even outside a key=value form', () => {
    buildBrowserUrl({ browser_url: 'wss://h', api_key: 'registered-key-9f8e7d' });
    expect(redact('token registered-key-9f8e7d in prose')).toBe('token *** in prose');
  });
});
