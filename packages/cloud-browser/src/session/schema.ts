/**
 * The cloud browser's query parameters (docs/wire.md §2.4, docs/decisions.md D3 and docs/decisions.md D7): one zod schema,
 * the single source of truth for the client's builder and the emulator's parser.
 */
import { z } from 'zod';
import { show } from '../internal/issues.js';
import { redactUrl } from '../internal/redact.js';
import type { Agree, Assert, Schema } from '../internal/schema.js';
import {
  BYOP_PROTOCOLS,
  MAX_LANGUAGES,
  MAX_TIMEOUT_SECONDS,
  OPERATING_SYSTEMS,
  PROXY_POOLS,
  type SessionOptionValues,
} from './options.js';

export {
  BYOP_PROTOCOLS,
  MAX_LANGUAGES,
  MAX_TIMEOUT_SECONDS,
  OPERATING_SYSTEMS,
  type OperatingSystem,
  PROXY_POOLS,
  type ProxyPool,
  SECRET_OPTIONS,
  SESSION_OPTION_NAMES,
  SESSION_WIRE_KINDS,
  type SessionOptionValues,
  type WireKind,
} from './options.js';

const bool = (name: string) =>
  z.boolean({ error: (iss) => `\`${name}\` must be true or false (got ${show(iss.input)})` }).nullish();

const text = (name: string, secret = false) =>
  z
    .string({ error: (iss) => `\`${name}\` must be a string${secret ? '' : ` (got ${show(iss.input)})`}` })
    .min(1, { error: `\`${name}\` must not be empty: leave it out instead` })
    .refine((s) => s.isWellFormed(), { error: `\`${name}\` must be well-formed Unicode (it holds a lone surrogate)` });

const int = (name: string, unit: string, min: number, max?: number) => {
  let s = z
    .number({ error: (iss) => `\`${name}\` must be a whole number of ${unit} (got ${show(iss.input)})` })
    .int({ error: (iss) => `\`${name}\` must be a whole number of ${unit} (got ${show(iss.input)})` })
    .min(min, { error: (iss) => `\`${name}\` must be at least ${min} (got ${show(iss.input)})` });
  if (max !== undefined) {
    s = s.max(max, { error: (iss) => `\`${name}\` must be at most ${max} ${unit} (got ${show(iss.input)})` });
  }
  return s.nullish();
};

const oneOf = <const T extends readonly [string, ...string[]]>(name: string, values: T) =>
  z
    .enum(values, { error: (iss) => `\`${name}\` must be one of ${values.join(', ')} (got ${show(iss.input)})` })
    .nullish();

/**
 * A list option: a list of strings, or one comma-separated string. Entries are trimmed,
 * must be non-empty and cannot hold a comma (the wire form joins them with `,`).
 */
const list = (name: string, bounds: { min?: number; max?: number } = {}) =>
  z
    .union([z.string(), z.array(z.string()).readonly()], {
      error: (iss) => `\`${name}\` must be a list of strings or one comma-separated string (got ${show(iss.input)})`,
    })
    .transform((value, ctx) => {
      const entries = typeof value === 'string' ? (value.trim() === '' ? [] : value.split(',')) : value;
      const bad = (message: string) => {
        ctx.issues.push({ code: 'custom', message, input: value });
        return z.NEVER;
      };
      if (typeof value !== 'string' && entries.some((e) => e.includes(','))) {
        return bad(`\`${name}\` entries cannot contain a comma: give each entry on its own`);
      }
      const trimmed = entries.map((e) => e.trim());
      if (trimmed.some((e) => e.length === 0)) {
        return bad(`\`${name}\` has an empty entry (got ${show(value)}): remove the stray comma or blank entry`);
      }
      const count = trimmed.length;
      if (bounds.min !== undefined && count < bounds.min) {
        return bad(
          `\`${name}\` needs at least ${bounds.min} entr${bounds.min === 1 ? 'y' : 'ies'}: leave it out instead`,
        );
      }
      if (bounds.max !== undefined && count > bounds.max) {
        return bad(
          `\`${name}\` has at most ${bounds.max} entries (got ${count}): keep the ${bounds.max} you prefer most, in order`,
        );
      }
      if (!trimmed.every((e) => e.isWellFormed())) return bad(`\`${name}\` must be well-formed Unicode`);
      return trimmed;
    })
    .nullish();

const byopProxy = text('byop_proxy', true).superRefine((value, ctx) => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    ctx.addIssue({
      code: 'custom',
      message: `\`byop_proxy\` must be a full proxy URL such as socks5://user:password@host:1080 (got something that is not a URL)`,
    });
    return;
  }
  const protocol = url.protocol.slice(0, -1).toLowerCase();
  const problems: string[] = [];
  if (!(BYOP_PROTOCOLS as readonly string[]).includes(protocol)) {
    problems.push(`its protocol must be one of ${BYOP_PROTOCOLS.join(', ')} (got ${protocol}:)`);
  }
  if (!url.username) problems.push('it needs a user');
  if (!url.password) problems.push('it needs a password');
  if (!url.hostname) problems.push('it needs a host');
  if (!url.port) problems.push('it needs an explicit port');
  if ((url.pathname && url.pathname !== '/') || url.search || url.hash) {
    problems.push('it must not have a path, query or fragment');
  }
  if (problems.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `\`byop_proxy\` must be protocol://user:password@host:port: ${problems.join('; ')} (got ${redactUrl(value)})`,
    });
  }
});

const vaultKey = z
  .string({ error: '`vault_key` must be a string: the base64 key returned when the vault was created or rotated' })
  .refine((s) => /^[A-Za-z0-9+/]{43}=$/.test(s) && btoa(atob(s)) === s, {
    error:
      '`vault_key` must be the standard base64 of exactly 32 bytes (44 characters ending in `=`), as returned when the vault was created or rotated',
  });

const fields = {
  proxy_pool: oneOf('proxy_pool', PROXY_POOLS),
  os: oneOf('os', OPERATING_SYSTEMS),
  session: text('session').nullish(),
  country: text('country').nullish(),
  lang: text('lang').nullish(),
  languages: list('languages', { min: 1, max: MAX_LANGUAGES }),
  auto_close: bool('auto_close'),
  timeout: int('timeout', 'seconds', 1, MAX_TIMEOUT_SECONDS),
  debug: bool('debug'),
  extensions: list('extensions', { min: 0 }),
  block_images: bool('block_images'),
  block_styles: bool('block_styles'),
  block_fonts: bool('block_fonts'),
  block_media: bool('block_media'),
  screenshot: bool('screenshot'),
  resolution: text('resolution').nullish(),
  target_url: text('target_url')
    .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), {
      error: (iss) => `\`target_url\` must be an http or https URL (got ${show(iss.input)})`,
    })
    .nullish(),
  cache: bool('cache'),
  blacklist: bool('blacklist'),
  unblock: bool('unblock'),
  unblock_timeout: int('unblock_timeout', 'seconds', 0),
  browser_brand: text('browser_brand').nullish(),
  byop_proxy: byopProxy.nullish(),
  enable_mcp: bool('enable_mcp'),
  solve_captcha: bool('solve_captcha'),
  vault: text('vault')
    .regex(/^[A-Za-z0-9]+$/, {
      error: (iss) => `\`vault\` must be the vault's alphanumeric name (got ${show(iss.input)})`,
    })
    .nullish(),
  vault_key: vaultKey.nullish(),
  enable_vnc: bool('enable_vnc'),
  vnc_password: text('vnc_password', true).nullish(),
  enable_rtc: bool('enable_rtc'),
  rtc_username: text('rtc_username').nullish(),
  rtc_password: text('rtc_password', true).nullish(),
  hitl_allowed_networks: list('hitl_allowed_networks', { min: 1 }),
  api_key: text('api_key', true).nullish(),
};

type Raw = Record<string, unknown>;
const isSet = (raw: Raw, name: string) => raw[name] !== undefined && raw[name] !== null;

/** Rules across options (docs/decisions.md D7): checked even when some option has the wrong type, so every problem shows at once. */
function pairings(raw: Raw, ctx: { addIssue: (i: { code: 'custom'; message: string; path: string[] }) => void }) {
  const need = (name: string, message: string) => ctx.addIssue({ code: 'custom', message, path: [name] });
  if (isSet(raw, 'vault') && !isSet(raw, 'vault_key')) {
    need('vault_key', '`vault` needs `vault_key`: pass the base64 key returned when the vault was created or rotated');
  }
  if (isSet(raw, 'vault_key') && !isSet(raw, 'vault')) {
    need('vault', '`vault_key` needs `vault`: name the vault the key opens');
  }
  if (isSet(raw, 'vnc_password') && raw.enable_vnc !== true) {
    need('enable_vnc', '`vnc_password` needs `enable_vnc: true`: set it, or leave the password out');
  }
  // Without a password only the networks allowed to attach unauthenticated can view (docs/decisions.md D5, docs/decisions.md D7).
  const hitl = isSet(raw, 'hitl_allowed_networks');
  if (raw.enable_vnc === true && !isSet(raw, 'vnc_password') && !hitl) {
    need(
      'vnc_password',
      '`enable_vnc: true` needs `vnc_password` (or `hitl_allowed_networks` for clients allowed without one)',
    );
  }
  for (const name of ['rtc_username', 'rtc_password']) {
    if (isSet(raw, name) && raw.enable_rtc !== true) {
      need('enable_rtc', `\`${name}\` needs \`enable_rtc: true\`: set it, or leave \`${name}\` out`);
    }
  }
  if (raw.enable_rtc === true && !isSet(raw, 'rtc_password') && !hitl) {
    need(
      'rtc_password',
      '`enable_rtc: true` needs `rtc_password` (or `hitl_allowed_networks` for clients allowed without one)',
    );
  }
}

const zodSchema = z
  .strictObject(fields, {
    error: (iss) => (iss.code === 'invalid_type' ? 'session options must be an object' : undefined),
  })
  .check(z.superRefine((raw, ctx) => pairings(raw as Raw, ctx), { when: () => true }))
  .transform((value) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined && v !== null) out[k] = v;
    return out as { [K in keyof typeof value]?: NonNullable<(typeof value)[K]> };
  });

/** Session options as the caller writes them: every option may be left out, `null` too. */
export type BrowserSessionOptions = { [K in keyof SessionOptionValues]?: SessionOptionValues[K] | null | undefined };

/** The options that are lists: a list of strings, or one comma-separated string. */
type ListOption = 'languages' | 'extensions' | 'hitl_allowed_networks';

/** Session options after validation: lists normalised to arrays, nulls dropped. */
export type ParsedBrowserSession = {
  [K in keyof SessionOptionValues]?: K extends ListOption ? string[] : SessionOptionValues[K];
};

// The interfaces above are what users see; these fail to compile when the schema disagrees.
type _SessionInputAgrees = Assert<Agree<BrowserSessionOptions, z.input<typeof zodSchema>>>;
type _SessionOutputAgrees = Assert<Agree<ParsedBrowserSession, z.output<typeof zodSchema>>>;

/**
 * Every query parameter of the cloud browser (docs/wire.md §2.4) plus `api_key`, with wire names.
 * Unknown option names are refused. Parsing normalises `languages` and
 * `hitl_allowed_networks` to lists and drops `null`s.
 *
 * @example
 * browserSessionSchema.parse({ api_key: 'k', timeout: 600, languages: 'en-US,fr' })
 * // { api_key: 'k', timeout: 600, languages: ['en-US', 'fr'] }
 */
export const browserSessionSchema: Schema<ParsedBrowserSession> = zodSchema;
