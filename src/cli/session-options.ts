/** Every session option of spec 2.4 as a command-line flag, with the library's validation. */
import { type Command, Option } from 'commander';
import { SESSION_WIRE_KINDS } from '../session/schema.js';

const flag = (name: string) => name.replace(/_/g, '-');
const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** Add a flag per session option (`--proxy-pool`, `--block-images [bool]`…) plus `--vnc`. */
export function addSessionOptions(command: Command): Command {
  for (const [name, kind] of Object.entries(SESSION_WIRE_KINDS)) {
    if (name === 'api_key') continue;
    if (kind === 'boolean') {
      command.addOption(new Option(`--${flag(name)} [bool]`, `${name} (true or false)`));
    } else {
      command.addOption(new Option(`--${flag(name)} <${kind === 'list' ? 'a,b' : 'value'}>`, name));
    }
  }
  command.addOption(new Option('--vnc', 'the same as --enable-vnc'));
  command.addOption(new Option('--browser-url <url>', 'the cloud browser (default: CLOUD_BROWSER_URL)'));
  command.addOption(new Option('--key <key>', 'the API key (default: CLOUD_API_KEY)'));
  return command;
}

/** The session options the flags name; values are passed through for the library to validate. */
export function sessionOptionsFrom(flags: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(SESSION_WIRE_KINDS)) {
    const value = flags[camel(name)];
    if (value === undefined || name === 'api_key') continue;
    if (kind === 'boolean') out[name] = value === true || value === 'true' ? true : value === 'false' ? false : value;
    else if (kind === 'integer') out[name] = /^-?\d+$/.test(String(value)) ? Number(value) : value;
    else out[name] = value;
  }
  if (flags.vnc === true) out.enable_vnc = true;
  if (typeof flags.browserUrl === 'string') out.browser_url = flags.browserUrl;
  if (typeof flags.key === 'string') out.api_key = flags.key;
  return out;
}
