/** VNC credentials of a session (spec parts 4 and 5, docs/decisions.md D5). */
import { ConfigError, type ConfigIssue } from '../errors.js';
import { checkNumber } from '../internal/knobs.js';
import { REDACTED, registerSecret } from '../internal/redact.js';

/** The native VNC port of the service (docs/wire.md §4). */
export const VNC_TCP_PORT = 5901;

/** Where and how a VNC viewer connects. */
export interface VncEndpoint {
  /** `vnc://<run_id>@<host>:5901`, or `ws(s)://<host>/run/<run_id>/vnc`. */
  readonly url: string;
  /** What the viewer types: `<salt>-<vnc_password>` for the native client, the raw password for the WebSocket view. */
  readonly password: string;
}

/** Both ways to watch a session: a native VNC client and the WebSocket (noVNC) view. */
export interface VncCredentials {
  readonly tcp: VncEndpoint;
  readonly websocket: VncEndpoint;
}

/** What {@link vncCredentials} needs. */
export interface VncCredentialsInput {
  /** The browser URL the session was opened on (its query is ignored). */
  browserUrl: string | URL;
  /** `X-Browser-Run-Id` of the upgrade. */
  runId: string;
  /** `X-Browser-Project-Salt` of the upgrade, or {@link projectSalt} of the key. */
  salt: string;
  /** The `vnc_password` the session was opened with. */
  vncPassword: string;
  /**
   * The native port, when the service names another than 5901 (the emulator does, in its
   * `X-Emulator-Vnc-Port` header, when 5901 was taken). @default 5901
   */
  tcpPort?: number | undefined;
}

const inspect = Symbol.for('nodejs.util.inspect.custom');

function endpoint(url: string, password: string): VncEndpoint {
  const value = { url, password };
  // Printing credentials by accident (console.log, util.inspect) shows the URL only;
  // reading `.password` or serialising on purpose still gives the password.
  Object.defineProperty(value, inspect, {
    value: () => `{ url: '${url}', password: '${REDACTED}' }`,
    enumerable: false,
  });
  return Object.freeze(value);
}

/**
 * Ready-to-use VNC credentials (docs/decisions.md D5): the native client's `vnc://<run_id>@<host>:5901` (or `tcpPort`) with
 * password `<salt>-<vnc_password>`, and the WebSocket view `<origin>/run/<run_id>/vnc` with the
 * raw password. `util.inspect` shows the passwords as `***`.
 *
 * @example
 * const vnc = vncCredentials({ browserUrl: 'wss://browser.example', runId, salt, vncPassword: 'hunter22' })
 * // vnc.tcp.url === `vnc://${runId}@browser.example:5901`, vnc.tcp.password === `${salt}-hunter22`
 */
export function vncCredentials(input: VncCredentialsInput): VncCredentials {
  const issues: ConfigIssue[] = [];
  let url: URL | undefined;
  try {
    url = new URL(String(input.browserUrl));
    if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
      issues.push({ option: 'browserUrl', message: '`browserUrl` must be the ws:// or wss:// URL of the session' });
    }
  } catch {
    issues.push({ option: 'browserUrl', message: '`browserUrl` is not a URL' });
  }
  if (typeof input.runId !== 'string' || !/^[A-Za-z0-9._~-]{1,200}$/.test(input.runId)) {
    issues.push({
      option: 'runId',
      message: '`runId` must be the X-Browser-Run-Id of the session (letters, digits, `.`, `_`, `~`, `-`)',
    });
  }
  if (typeof input.salt !== 'string' || !/^[0-9a-f]{8}$/.test(input.salt)) {
    issues.push({
      option: 'salt',
      message: '`salt` must be 8 lower-case hex characters (X-Browser-Project-Salt or projectSalt(api_key))',
    });
  }
  if (typeof input.vncPassword !== 'string' || input.vncPassword.length === 0) {
    issues.push({
      option: 'vncPassword',
      message: '`vncPassword` is required: the `vnc_password` the session was opened with',
    });
  }
  const port = checkNumber('tcpPort', input.tcpPort, { min: 1, max: 65535, unit: 'port' });
  if (port) issues.push(port);
  if (issues.length > 0 || url === undefined) throw new ConfigError('VNC credentials input', issues);
  registerSecret(input.vncPassword);
  const tcpPassword = `${input.salt}-${input.vncPassword}`;
  registerSecret(tcpPassword);
  return Object.freeze({
    tcp: endpoint(`vnc://${input.runId}@${url.hostname}:${input.tcpPort ?? VNC_TCP_PORT}`, tcpPassword),
    websocket: endpoint(`${url.protocol}//${url.host}/run/${input.runId}/vnc`, input.vncPassword),
  });
}
