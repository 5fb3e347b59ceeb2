/** Every session option of docs/wire.md §2.4 as a command-line flag, with the library's validation. */
import { type Command, Option } from 'commander';
import {
  BYOP_PROTOCOLS,
  MAX_LANGUAGES,
  MAX_TIMEOUT_SECONDS,
  OPERATING_SYSTEMS,
  PROXY_POOLS,
  SESSION_WIRE_KINDS,
} from '../session/options.js';
import type { BrowserUrlOptions } from '../session/url.js';
import { secretFrom } from './secrets.js';

const flag = (name: string) => name.replace(/_/g, '-');
const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** What each flag takes, with its unit, range or choices (the library checks the values). */
const HELP: Partial<Record<keyof typeof SESSION_WIRE_KINDS, string>> = {
  proxy_pool: `the proxy pool: ${PROXY_POOLS.join(' or ')}`,
  os: `the operating system shown: ${OPERATING_SYSTEMS.join(', ')}`,
  session: 'a name to join the same session again (with --auto-close false)',
  country: 'the proxy country, ISO 3166-1 alpha-2 (us, fr...)',
  lang: 'the browser language, a BCP 47 tag (en-US)',
  languages: `Accept-Language tags, comma-separated, at most ${MAX_LANGUAGES}`,
  timeout: `seconds before the session ends, 1 to ${MAX_TIMEOUT_SECONDS}`,
  unblock_timeout: 'seconds to spend unblocking, 0 or more',
  resolution: 'the window size, WIDTHxHEIGHT (1920x1080)',
  target_url: 'the page the session opens first, http(s)',
  extensions: 'extension ids, comma-separated',
  byop_proxy: `your proxy, ${BYOP_PROTOCOLS.join('|')}://[user:password@]host:port (or --byop-proxy-file, CLOUD_BYOP_PROXY)`,
  vault: 'the credential vault to fill logins from (with a vault key)',
  vault_key: 'the vault key, base64 (or --vault-key-file, CLOUD_VAULT_KEY)',
  vnc_password: 'the VNC password (or --vnc-password-file, CLOUD_VNC_PASSWORD)',
  rtc_username: 'the WebRTC view user name',
  rtc_password: 'the WebRTC view password (or --rtc-password-file, CLOUD_RTC_PASSWORD)',
  hitl_allowed_networks: 'networks that may watch over VNC without a password, CIDR, comma-separated',
};

/**
 * The secrets a flag can carry, which may come instead from a file (`-` for standard input) or
 * the environment, so that no other user of the machine reads them in the process list.
 */
const SECRET_FLAGS = {
  vnc_password: 'CLOUD_VNC_PASSWORD',
  rtc_password: 'CLOUD_RTC_PASSWORD',
  vault_key: 'CLOUD_VAULT_KEY',
  byop_proxy: 'CLOUD_BYOP_PROXY',
} as const;

/** Add a flag per session option (`--proxy-pool`, `--block-images [bool]`…) plus `--vnc`. */
export function addSessionOptions(command: Command): Command {
  for (const [name, kind] of Object.entries(SESSION_WIRE_KINDS)) {
    if (name === 'api_key') continue;
    const help = HELP[name as keyof typeof HELP] ?? name.replace(/_/g, ' ');
    if (kind === 'boolean') {
      command.addOption(new Option(`--${flag(name)} [bool]`, `${help} (true or false)`));
    } else {
      const value = kind === 'list' ? 'a,b' : kind === 'integer' ? 'n' : 'value';
      command.addOption(new Option(`--${flag(name)} <${value}>`, help));
    }
  }
  for (const [name, env] of Object.entries(SECRET_FLAGS)) {
    command.addOption(
      new Option(`--${flag(name)}-file <file>`, `read --${flag(name)} from a file (- for standard input); else ${env}`),
    );
  }
  command.addOption(new Option('--vnc', 'the same as --enable-vnc'));
  command.addOption(new Option('--browser-url <url>', 'the cloud browser (default: CLOUD_BROWSER_URL)'));
  command.addOption(new Option('--key <key>', 'the API key (default: CLOUD_API_KEY)'));
  return command;
}

/**
 * The session options the flags name; values are passed through for the library to validate.
 * A secret given by neither flag comes from its `--…-file` or its environment variable.
 */
export async function sessionOptionsFrom(flags: Record<string, unknown>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(SESSION_WIRE_KINDS)) {
    const value = flags[camel(name)];
    if (value === undefined || name === 'api_key') continue;
    if (kind === 'boolean') out[name] = value === true || value === 'true' ? true : value === 'false' ? false : value;
    else if (kind === 'integer') out[name] = /^-?\d+$/.test(String(value)) ? Number(value) : value;
    else out[name] = value;
  }
  for (const [name, env] of Object.entries(SECRET_FLAGS)) {
    if (out[name] !== undefined) continue;
    const file = flags[`${camel(name)}File`];
    const secret = await secretFrom(`--${flag(name)}-file`, typeof file === 'string' ? file : undefined, env);
    if (secret !== undefined) out[name] = secret;
  }
  if (flags.vnc === true) out.enable_vnc = true;
  if (typeof flags.browserUrl === 'string') out.browser_url = flags.browserUrl;
  if (typeof flags.key === 'string') out.api_key = flags.key;
  return out;
}

/** The validated browser URL the flags ask for; the URL builder (and zod) is loaded only here. */
export async function browserUrlFrom(flags: Record<string, unknown>): Promise<URL> {
  const { buildBrowserUrl } = await import('../session/url.js');
  return buildBrowserUrl((await sessionOptionsFrom(flags)) as BrowserUrlOptions);
}

/** The flag that sets an option, for messages: `enable_vnc` is `--enable-vnc`, `baseUrl` `--api-url`. */
export function flagOf(option: string): string {
  const special: Record<string, string> = {
    api_key: '--key',
    key: '--key',
    baseUrl: '--api-url',
    browserUrl: '--browser-url',
    pollInterval: '--poll',
  };
  if (option.startsWith('-')) return option;
  return special[option] ?? `--${option.replace(/_/g, '-').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}
