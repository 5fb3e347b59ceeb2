/** The browser URL: build it from options (docs/decisions.md D3) and read options back from it. */
import { ConfigError, type ConfigIssue } from '../errors.js';
import { toConfigIssues, unknownOption } from '../internal/issues.js';
import { registerSecret } from '../internal/redact.js';
import {
  type BrowserSessionOptions,
  browserSessionSchema,
  type ParsedBrowserSession,
  SESSION_OPTION_NAMES,
  SESSION_WIRE_KINDS,
} from './schema.js';

/** Where the builder looks when an option is not passed (docs/decisions.md D2). */
export const ENV = {
  apiKey: 'CLOUD_API_KEY',
  browserUrl: 'CLOUD_BROWSER_URL',
  apiUrl: 'CLOUD_API_URL',
} as const;

/** Read an environment variable in any runtime (no `process` in browsers and workers). */
export function env(name: string): string | undefined {
  const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
  return value === undefined || value === '' ? undefined : value;
}

/** Values {@link BrowserUrlOptions.extra} may carry. */
export type ExtraValue = string | number | boolean;

/** Session options plus where the browser lives. */
export type BrowserUrlOptions = BrowserSessionOptions & {
  /** The cloud browser's WebSocket address, `ws:` or `wss:`. @default process.env.CLOUD_BROWSER_URL */
  browser_url?: string | URL | undefined;
  /**
   * Query parameters newer than this library, sent as given after the known ones, unvalidated
   * (docs/decisions.md D19). A typo in a known option is still refused; a name known to the library is refused
   * here too (pass it as the option). Values of names that look like credentials are redacted.
   */
  extra?: Readonly<Record<string, ExtraValue>> | undefined;
};

// Names whose values are treated as secrets when they come through `extra`.
const SECRET_NAME = /pass|secret|key|token|credential|auth/i;

/** The problems of `extra`, and its entries in order. */
function checkExtra(extra: unknown, issues: ConfigIssue[]): [string, string][] {
  if (extra === undefined || extra === null) return [];
  if (typeof extra !== 'object' || Array.isArray(extra)) {
    issues.push({ option: 'extra', message: '`extra` must be an object of query parameters: { name: value }' });
    return [];
  }
  const known: readonly string[] = SESSION_OPTION_NAMES;
  const out: [string, string][] = [];
  for (const [name, value] of Object.entries(extra)) {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) {
      issues.push({
        option: 'extra',
        message: `\`extra\` names must be 1 to 64 letters, digits, _ . or - (got ${JSON.stringify(name.slice(0, 40))})`,
      });
    } else if (known.includes(name) || name === 'browser_url') {
      issues.push({
        option: `extra.${name}`,
        message: `\`${name}\` is a known option: pass it as \`${name}\`, not in \`extra\``,
      });
    } else if (
      !(
        typeof value === 'string' ||
        typeof value === 'boolean' ||
        (typeof value === 'number' && Number.isFinite(value))
      )
    ) {
      issues.push({
        option: `extra.${name}`,
        message: `\`extra.${name}\` must be a string, a finite number or a boolean`,
      });
    } else {
      if (SECRET_NAME.test(name)) registerSecret(String(value));
      out.push([name, String(value)]);
    }
  }
  return out;
}

function checkBrowserUrl(value: string | URL | undefined, issues: ConfigIssue[]): URL | undefined {
  if (value === undefined || value === '') {
    issues.push({
      option: 'browser_url',
      message: `\`browser_url\` is required: pass it, or set ${ENV.browserUrl} (the emulator prints one)`,
    });
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    issues.push({
      option: 'browser_url',
      message: '`browser_url` must be a ws:// or wss:// URL (got something that is not a URL)',
    });
    return undefined;
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    issues.push({
      option: 'browser_url',
      message: `\`browser_url\` must use ws:// or wss:// (got ${url.protocol}//${url.host})`,
    });
  }
  if (url.search || url.hash || url.username || url.password) {
    issues.push({
      option: 'browser_url',
      message: '`browser_url` must not carry a query, fragment or credentials: pass every option as a field',
    });
  }
  return url;
}

function rememberSecrets(options: ParsedBrowserSession): void {
  registerSecret(options.api_key);
  registerSecret(options.vault_key);
  registerSecret(options.vnc_password);
  registerSecret(options.rtc_password);
  if (options.byop_proxy && URL.canParse(options.byop_proxy)) {
    registerSecret(decodeURIComponent(new URL(options.byop_proxy).password));
  }
}

/**
 * Validate session options and give the cloud browser's WebSocket URL (docs/decisions.md D3, docs/decisions.md D7).
 * `api_key` falls back to `CLOUD_API_KEY`, `browser_url` to `CLOUD_BROWSER_URL`.
 * Every problem is reported at once in one {@link ConfigError}; secrets are never echoed.
 *
 * The URL carries the API key: hand it to nothing that logs.
 *
 * @example
 * const url = buildBrowserUrl({ browser_url: 'wss://browser.example', api_key: key, timeout: 600, languages: ['en-US', 'fr'] })
 */
export function buildBrowserUrl(options: BrowserUrlOptions): URL {
  const issues: ConfigIssue[] = [];
  const isObject = typeof options === 'object' && options !== null && !Array.isArray(options);
  const { browser_url, extra, ...rest } = isObject ? options : ({} as BrowserUrlOptions);
  const base = checkBrowserUrl(browser_url ?? env(ENV.browserUrl), issues);
  const extras = checkExtra(extra, issues);
  if (!isObject) issues.push({ option: '(options)', message: 'session options must be an object' });
  const withKey = { ...rest, api_key: rest.api_key ?? env(ENV.apiKey) };
  const parsed = browserSessionSchema.safeParse(withKey);
  if (!parsed.success) issues.push(...toConfigIssues(parsed.error.issues, SESSION_OPTION_NAMES));
  else if (parsed.data.api_key === undefined) {
    issues.push({ option: 'api_key', message: `\`api_key\` is required: pass it, or set ${ENV.apiKey}` });
  }
  if (issues.length > 0 || !parsed.success || base === undefined) {
    throw new ConfigError('browser session options', issues);
  }
  rememberSecrets(parsed.data);
  const url = new URL(base.href);
  const query = encodeSessionQuery(parsed.data);
  for (const [name, value] of extras) query.set(name, value);
  url.search = query.toString();
  return url;
}

/** A session to join as it is, by the address the service gave (an unblock's `ws_url`, docs/decisions.md D24). */
export interface JoinTarget {
  /** A `ws://` or `wss://` address with its query; it holds the key. */
  ws_url: string | URL;
}

/**
 * The address to connect to: the options' URL built and checked (docs/decisions.md D3, docs/decisions.md D7), or the `ws_url` of
 * a session the service opened, checked to be a WebSocket address, its credentials remembered
 * for redaction.
 *
 * @example
 * const { ws_url } = await api.unblock({ url }); browserUrlOf({ ws_url })
 */
export function browserUrlOf(target: BrowserUrlOptions | JoinTarget): URL {
  if (typeof target !== 'object' || target === null || !('ws_url' in target)) return buildBrowserUrl(target);
  const raw = String(target.ws_url);
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || (url.protocol !== 'ws:' && url.protocol !== 'wss:')) {
    throw new ConfigError('session to join', [
      { option: 'ws_url', message: '`ws_url` must be the ws:// or wss:// address the service gave' },
    ]);
  }
  for (const name of ['api_key', 'key', 'vault_key', 'vnc_password', 'rtc_password'])
    registerSecret(url.searchParams.get(name) ?? undefined);
  return url;
}

/** The query string of validated options, in the stable order of {@link SESSION_OPTION_NAMES} (docs/decisions.md D3). */
export function encodeSessionQuery(options: ParsedBrowserSession): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of SESSION_OPTION_NAMES) {
    const value = options[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      if (value.length > 0) query.set(name, value.join(','));
    } else {
      query.set(name, String(value));
    }
  }
  return query;
}

/** Options read back from a browser URL, with the URL's address without its query. */
export type ParsedBrowserUrl = ParsedBrowserSession & {
  browser_url: string;
  /** With `{ unknown: 'keep' }`: the names of parameters this library does not know (docs/decisions.md D19). */
  ignored?: string[];
};

/**
 * Read the options back from a browser URL: the inverse of {@link buildBrowserUrl}, for the
 * emulator and for tools. Unknown, repeated or malformed parameters are a {@link ConfigError}.
 * It does not require `api_key`: the server answers a missing key with 401, not 400.
 *
 * @example
 * parseBrowserUrl('wss://b.example/?timeout=60&languages=en-US,fr&api_key=k')
 * // { browser_url: 'wss://b.example/', timeout: 60, languages: ['en-US', 'fr'], api_key: 'k' }
 */
export function parseBrowserUrl(input: string | URL, options: { unknown?: 'refuse' | 'keep' } = {}): ParsedBrowserUrl {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    throw new ConfigError('browser URL', [{ option: 'browser_url', message: '`browser_url` is not a URL' }]);
  }
  const issues: ConfigIssue[] = [];
  const raw: Record<string, unknown> = {};
  const kinds: Record<string, string> = SESSION_WIRE_KINDS;
  const seen = new Set<string>();
  const ignored: string[] = [];
  for (const [name, value] of url.searchParams) {
    const kind = kinds[name];
    const repeated = seen.has(name);
    seen.add(name);
    if (kind === undefined && options.unknown === 'keep') {
      if (!repeated) ignored.push(name);
    } else if (kind === undefined) {
      issues.push(unknownOption(name, SESSION_OPTION_NAMES, 'query parameter'));
    } else if (repeated) {
      issues.push({ option: name, message: `\`${name}\` is given more than once: send it once` });
    } else if (kind === 'boolean') {
      if (value === 'true' || value === 'false') raw[name] = value === 'true';
      else
        issues.push({
          option: name,
          message: `\`${name}\` must be true or false (got ${JSON.stringify(value.slice(0, 40))})`,
        });
    } else if (kind === 'integer') {
      if (/^-?\d{1,15}$/.test(value)) raw[name] = Number(value);
      else
        issues.push({
          option: name,
          message: `\`${name}\` must be a whole number (got ${JSON.stringify(value.slice(0, 40))})`,
        });
    } else {
      raw[name] = value;
    }
  }
  const parsed = browserSessionSchema.safeParse(raw);
  if (!parsed.success) {
    const named = new Set(issues.map((i) => i.option));
    issues.push(...toConfigIssues(parsed.error.issues, SESSION_OPTION_NAMES).filter((i) => !named.has(i.option)));
  }
  if (issues.length > 0 || !parsed.success) throw new ConfigError('browser URL', issues);
  return {
    browser_url: `${url.origin}${url.pathname}`,
    ...parsed.data,
    ...(options.unknown === 'keep' ? { ignored } : {}),
  };
}
