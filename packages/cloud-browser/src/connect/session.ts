/** What both connectors share: opening the socket, checking the salt, closing cleanly. */
import {
  ConfigError,
  ConnectionError,
  isCloudBrowserError,
  ServiceError,
  type SessionClosedError,
  TimeoutError,
} from '../errors.js';
import { numberIssues } from '../internal/knobs.js';
import { type Log, type Logger, logFor, loggerIssues } from '../internal/log.js';
import { redact, redactUrl } from '../internal/redact.js';
import { sleep } from '../internal/sleep.js';
import { projectSalt } from '../session/salt.js';
import { type BrowserUrlOptions, browserUrlOf, type JoinTarget } from '../session/url.js';
import { type VncCredentials, vncCredentials } from '../session/vnc.js';
import { FileTransfer } from './files.js';
import { type CloudSocket, CONNECT_DEFAULTS, openCloudSocket, RESERVED_CDP_ID } from './socket.js';

export { CONNECT_DEFAULTS } from './socket.js';

/** How to connect, besides the session options. */
export interface ConnectOptions {
  /** Milliseconds for the handshake and for the library to attach. @default 30000 */
  timeout?: number | undefined;
  /** Aborts the connection attempt. */
  signal?: AbortSignal | undefined;
  /** Seconds between WebSocket pings that keep idle sessions alive; 0 turns them off. @default 30 */
  keepAlive?: number | undefined;
  /** How many times to retry a refusal the service marks retryable (docs/decisions.md D6). @default 0 */
  retries?: number | undefined;
  /**
   * Where to tell connecting, connected, refused, retrying and closing (`console`, pino...),
   * secrets redacted; `DEBUG=cloud-browser:connect` prints the same to standard error.
   */
  logger?: Logger | undefined;
}

/** A connected cloud browser session. */
export interface CloudBrowserSession<B> {
  /** The library's browser, connected. */
  readonly browser: B;
  /** `X-Browser-Run-Id` of the upgrade. */
  readonly runId: string | undefined;
  /** The project salt: `X-Browser-Project-Salt`, checked against `projectSalt(api_key)`. */
  readonly salt: string;
  /** VNC credentials when the session was opened with `enable_vnc` and `vnc_password`. */
  readonly vnc: VncCredentials | undefined;
  /**
   * The session's MCP endpoint (streamable HTTP, the key sent as `Authorization: Bearer`) when it
   * was opened with `enable_mcp` and the upgrade named it: the emulator does; the live service's
   * address is not public (`POST /unblock` with `enable_mcp` answers it as `mcp_endpoint`).
   */
  readonly mcpEndpoint: string | undefined;
  /** Resolves when the session's socket closes, with why (code, redacted reason, service error). */
  readonly closed: Promise<SessionClosedError>;
  /** End the remote browser (CDP `Browser.close`), then close every socket and server we opened. */
  close(): Promise<void>;
  /** Leave the remote browser running (a named session with `auto_close: false` can be joined again). */
  disconnect(): Promise<void>;
  /**
   * Run a library call so that, if the session ends first, it fails at once with the
   * {@link SessionClosedError} (close code, reason, service error as cause) rather than the
   * library's own "target closed", or a hang.
   *
   * @example
   * await session.guard(page.goto(url))
   */
  guard<T>(work: Promise<T>): Promise<T>;
}

/** The socket, opened and checked, before a library attaches. */
export interface OpenedSession {
  socket: CloudSocket;
  salt: string;
  vnc: VncCredentials | undefined;
}

/** Build the URL, open the socket and check the salt against the key. */
export async function openSession(url: URL, connect: ConnectOptions): Promise<OpenedSession> {
  const socket = await openCloudSocket(url, connect);
  const query = url.searchParams;
  const salt = projectSalt(query.get('api_key') ?? '');
  if (socket.saltHeader !== undefined && socket.saltHeader !== salt) {
    await socket.close(1000, 'salt mismatch');
    throw new ConfigError('session', [
      {
        option: 'api_key',
        message:
          'the X-Browser-Project-Salt the service sent does not match `api_key`: the key is not the one the service knows, or `browser_url` points at another service',
      },
    ]);
  }
  const vncPassword = query.get('vnc_password');
  const vnc =
    query.get('enable_vnc') === 'true' && vncPassword && socket.runId
      ? vncCredentials({ browserUrl: url, runId: socket.runId, salt, vncPassword, tcpPort: socket.vncPortHeader })
      : undefined;
  return { socket, salt, vnc };
}

/**
 * Open a session and attach a library to it. A refusal the service marks retryable (docs/decisions.md D6),
 * whether an HTTP answer or a frame and close after the upgrade, is retried `retries` times
 * with exponential backoff and jitter, never sooner than its `retry_delay`.
 */
export async function establish<B>(
  options: BrowserUrlOptions | JoinTarget,
  connect: ConnectOptions,
  library: string,
  start: (opened: OpenedSession) => { connect: () => Promise<B>; cleanup: (browser?: B) => Promise<void> },
): Promise<CloudBrowserSession<B>> {
  const issues = numberIssues({
    timeout: [connect.timeout, { min: 1, max: 600_000, unit: 'milliseconds' }],
    keepAlive: [connect.keepAlive, { min: 0, max: 3600, integer: false, unit: 'seconds' }],
    retries: [connect.retries, { min: 0, max: 10, unit: 'retries' }],
  });
  issues.push(...loggerIssues(connect.logger));
  if (issues.length > 0) throw new ConfigError('connect options', issues);
  const url = browserUrlOf(options);
  const log = logFor('connect', connect.logger);
  const retries = connect.retries ?? CONNECT_DEFAULTS.retries;
  for (let attempt = 0; ; attempt++) {
    const started = Date.now();
    log('debug', `connecting ${library} to ${redactUrl(url)}${attempt > 0 ? ` (retry ${attempt} of ${retries})` : ''}`);
    try {
      const opened = await openSession(url, connect);
      new FileTransfer(opened.socket, log);
      const parts = start(opened);
      const browser = await attach(
        opened,
        library,
        parts.connect,
        parts.cleanup,
        connect.signal,
        connect.timeout ?? CONNECT_DEFAULTS.timeout,
      );
      log('info', `connected ${library}: run ${opened.socket.runId ?? '(none)'} in ${Date.now() - started} ms`);
      return makeSession(opened, browser, () => parts.cleanup(browser), log);
    } catch (error) {
      const retryable = error instanceof ServiceError && error.is_retryable;
      const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
      if (!retryable || attempt >= retries || connect.signal?.aborted) {
        log('warn', `refused: ${why}${retryable ? ` (no retry left of ${retries})` : ''}`);
        throw error;
      }
      const backoff = Math.min(10_000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
      const wait = Math.round(Math.max(backoff, (error.retry_delay ?? 0) * 1000));
      log('warn', `refused: ${why}; retrying in ${wait} ms (${attempt + 1} of ${retries})`);
      await sleep(wait, connect.signal);
    }
  }
}

/**
 * Attach the library while watching the socket: a refusal or close during the attach
 * rejects with the service's error rather than the library's, and nothing is left open.
 */
export async function attach<B>(
  opened: OpenedSession,
  library: string,
  connect: () => Promise<B>,
  cleanup: () => Promise<void>,
  signal: AbortSignal | undefined,
  timeout: number,
): Promise<B> {
  const { socket } = opened;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    if (!signal) return;
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  const closed = socket.closed.then((e): never => {
    throw socket.refusal() ?? e;
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new TimeoutError(`${library} did not attach to the cloud browser within ${timeout} ms`)),
      timeout,
    );
  });
  try {
    return await Promise.race([connect(), closed, aborted, timedOut]);
  } catch (error) {
    await cleanup();
    await socket.close(1000, 'connect failed');
    const refusal = socket.refusal();
    if (refusal) throw refusal;
    if (error instanceof Error && (error.name === 'AbortError' || error === signal?.reason)) throw error;
    if (isCloudBrowserError(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new ConnectionError(`${library} could not attach to the cloud browser: ${redact(message)}`, { cause: error });
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    closed.catch(() => {});
    aborted.catch(() => {});
  }
}

/** The session object both connectors return. */
export function makeSession<B>(
  opened: OpenedSession,
  browser: B,
  closeLibrary: () => Promise<void>,
  log: Log = () => {},
): CloudBrowserSession<B> {
  const { socket } = opened;
  void socket.closed.then((closed) =>
    log(closed.closeCode === 1000 ? 'info' : 'warn', `closed: code ${closed.closeCode} ${closed.reason}`.trim()),
  );
  let ending: Promise<void> | undefined;
  const end = (kill: boolean) => {
    ending ??= (async () => {
      log('debug', kill ? 'closing: ending the remote browser' : 'disconnecting: leaving the remote browser running');
      if (kill && !socket.error) {
        socket.send(JSON.stringify({ id: RESERVED_CDP_ID, method: 'Browser.close' }));
        const timer = setTimeout(() => void socket.close(1000, 'closed by client'), 5000);
        await socket.closed;
        clearTimeout(timer);
      }
      await closeLibrary();
      await socket.close(1000, kill ? 'closed by client' : 'disconnected by client');
    })();
    return ending;
  };
  const guard = <T>(work: Promise<T>): Promise<T> => {
    if (socket.error) {
      work.catch(() => {});
      return Promise.reject(socket.error);
    }
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      void socket.closed.then((closed) => {
        if (!settled) reject(closed);
        settled = true;
      });
      work.then(
        (value) => {
          if (!settled) resolve(value);
          settled = true;
        },
        (error: unknown) => {
          // A failure that the session's end caused is reported as that end.
          if (!settled) reject(socket.error ?? error);
          settled = true;
        },
      );
    });
  };
  return {
    browser,
    guard,
    runId: socket.runId,
    mcpEndpoint: socket.mcpEndpointHeader,
    salt: opened.salt,
    vnc: opened.vnc,
    closed: socket.closed,
    close: () => end(true),
    disconnect: () => end(false),
  };
}
