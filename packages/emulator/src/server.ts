/** The emulator's server: browser WebSocket upgrades, and its own HTTP endpoints. */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ConfigError, isConfigError, type ParsedBrowserUrl, parseBrowserUrl, projectSalt } from 'cloud-browser';
import { numberIssues, RETRYABLE_BROWSER_CODES } from 'cloud-browser/internal';
import { WebSocketServer } from 'ws';
import { ExtensionStore } from './browser-api/extensions.js';
import { BrowserRestApi } from './browser-api/routes.js';
import { VaultStore } from './browser-api/vaults.js';
import { findChromium } from './chromium.js';
import { CrawlerApi } from './crawler/api.js';
import { CRAWL_LIMITS_DEFAULTS, type CrawlLimits } from './crawler/crawl.js';
import type { DeliveryRecord, EmulatorWebhook } from './crawler/deliveries.js';
import { Dashboard } from './dashboard/routes.js';
import { errorBody, isRefusal, keyOf, type Refusal, refusal, refuseUpgrade, sendError, sendJson } from './http.js';
import { DEFAULT_WARM_BROWSERS, WarmPool } from './pool.js';
import { RecordingStore } from './recording/store.js';
import { EmulatedSession, type EmulatorSessionInfo } from './session.js';
import { type RfbSecurity, startVncTcpServer } from './vnc/index.js';

/**
 * What the native port offers a client at `address`: VeNCrypt Plain, which finds the session by
 * its run id; and None when exactly one session lets that address in without a password (with
 * several, None could not tell which to show).
 */
function nativeVncSecurity(sessions: readonly EmulatedSession[], address: string): RfbSecurity {
  const open = sessions.filter((s) => s.allowsWithoutPassword(address));
  const security: RfbSecurity = {
    plain: (username, password) => sessions.find((s) => s.opensNativeVnc(username, password))?.vncTarget,
  };
  const [only] = open;
  if (open.length === 1 && only) security.none = only.vncTarget;
  return security;
}

/** Options of {@link startEmulator}. */
export interface EmulatorOptions {
  /** @default '127.0.0.1' */
  host?: string | undefined;
  /** 0 picks a free port. @default 0 */
  port?: number | undefined;
  /** Keys the emulator accepts; one is made up when none is given. */
  apiKeys?: readonly string[] | undefined;
  /** The browser to run; else `CHROME_PATH`, the system's, then `@sparticuz/chromium`. */
  chromiumPath?: string | undefined;
  /** Named webhooks crawls can notify (`webhook_name`): where to deliver and the signing secret. */
  webhooks?: Record<string, EmulatorWebhook> | undefined;
  /** The clock, ms. @default Date.now */
  now?: (() => number) | undefined;
  /**
   * The native VNC port (D5). When taken, any free port; 0 picks a free port at once.
   * @default 5901
   */
  vncPort?: number | undefined;
  /** Bounds on every crawl: a response's size (on the wire and decoded) and the page limit of crawls that set none. */
  crawler?: Partial<CrawlLimits> | undefined;
  /**
   * Browsers kept started for the next sessions (0: each session starts its own). A session
   * whose options need no launch flag (no `resolution`, `lang`, `languages`, `byop_proxy` nor
   * `extensions`) takes one, with a fresh profile, and a replacement starts in the background.
   * @default half the machine's cores, from 1 to 4
   */
  warmBrowsers?: number | undefined;
}

/** The emulator's own upgrade header: the native VNC port that serves the session (the service's is 5901). */
export const EMULATOR_VNC_PORT_HEADER = 'X-Emulator-Vnc-Port';

/** A refusal the next connection gets (D6). */
export interface RefusalFault {
  /** The browser error code, without `ERR::BROWSER::` (e.g. `ALLOCATION_FAILED`). */
  code: string;
  /** `http`: a non-101 answer with a JSON body; `frame`: upgrade, one JSON frame, then a close. @default 'http' */
  mode?: 'http' | 'frame';
  /** HTTP status of an `http` refusal. @default 503 */
  status?: number;
  /** Close code of a `frame` refusal: 1008, 1011 or 1013. @default 1013 */
  closeCode?: 1008 | 1011 | 1013;
  message?: string;
  /** Sent as `is_retryable`; by default the code decides (D6). */
  retryable?: boolean;
}

/** A running emulator. */
export interface Emulator {
  /** `ws://<host>:<port>/`: pass as `browser_url` or `CLOUD_BROWSER_URL`. */
  readonly browserUrl: string;
  /** `http://<host>:<port>`: pass as `CLOUD_API_URL`. */
  readonly apiUrl: string;
  /** The first accepted key. */
  readonly apiKey: string;
  /** The dashboard: open it in a browser (it holds the key: the page trades it for a cookie). */
  readonly dashboardUrl: string;
  /** The native VNC port (RFB 3.8, VeNCrypt Plain), for every session: 5901 unless it was taken. */
  readonly vncPort: number;
  /** The sessions running now, secrets redacted. */
  sessions(): EmulatorSessionInfo[];
  /** Faults on demand, for tests. */
  readonly faults: {
    /** Refuse the next browser connection this way. */
    refuseNext(fault: RefusalFault): void;
    /** Kill a session's Chromium as a crash would. */
    killBrowser(runId: string): Promise<void>;
    /** The next prompt answer sends an `event: error` frame after this many tokens. */
    failNextPromptAfter(tokens: number): void;
  };
  /** The crawler side: time travel for refresh runs, and the webhook deliveries made. */
  readonly crawler: {
    /** Move the emulator's clock forward; refresh runs that became due start. */
    advanceTime(ms: number): Promise<void>;
    /** Every webhook delivery made so far (ping first). */
    readonly deliveries: readonly DeliveryRecord[];
    /** Resolves when the deliveries queued so far are made. */
    settled(): Promise<void>;
  };
  /**
   * Everything the emulator keeps, as it keeps it (vaults and their sealed items, sessions,
   * extensions): for tests that look for a leaked secret.
   */
  stores(): unknown;
  /** End every session and stop serving. */
  close(): Promise<void>;
}

/**
 * Start the local emulator of the service: a real server on loopback that opens a real
 * Chromium per browser session and honours the options a local browser can.
 *
 * @example
 * const emulator = await startEmulator();
 * const session = await connectPlaywright(chromium, { browser_url: emulator.browserUrl, api_key: emulator.apiKey });
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const issues = numberIssues({
    port: [options.port, { min: 0, max: 65535, unit: 'port' }],
    vncPort: [options.vncPort, { min: 0, max: 65535, unit: 'port' }],
    'crawler.maxResponseBytes': [options.crawler?.maxResponseBytes, { min: 1024, max: 2 ** 31 - 1, unit: 'bytes' }],
    'crawler.pageLimit': [options.crawler?.pageLimit, { min: 1, max: 10_000_000, unit: 'pages' }],
    warmBrowsers: [options.warmBrowsers, { min: 0, max: 16, unit: 'browsers' }],
  });
  if (issues.length > 0) throw new ConfigError('emulator options', issues);
  const host = options.host ?? '127.0.0.1';
  const apiKeys = new Set(options.apiKeys?.length ? options.apiKeys : [`emu-${randomBytes(16).toString('hex')}`]);
  const [apiKey] = apiKeys;
  const executable = await findChromium(options.chromiumPath);
  const pool = new WarmPool(executable, options.warmBrowsers ?? DEFAULT_WARM_BROWSERS);
  const sessions = new Map<string, EmulatedSession>();
  const named = new Map<string, EmulatedSession>();
  const faults: RefusalFault[] = [];
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 256 * 1024 * 1024,
    skipUTF8Validation: true,
  });
  const sockets = new Set<Socket>();
  // Known once the server listens; the crawler's answers link back to it.
  let apiUrl = '';
  let browserUrl = '';
  const crawler = new CrawlerApi({
    apiKeys,
    webhooks: options.webhooks,
    now: options.now,
    apiUrl: () => apiUrl,
    limits: {
      maxResponseBytes: options.crawler?.maxResponseBytes ?? CRAWL_LIMITS_DEFAULTS.maxResponseBytes,
      pageLimit: options.crawler?.pageLimit ?? CRAWL_LIMITS_DEFAULTS.pageLimit,
    },
  });

  const sessionKey = (key: string, name: string) => `${key}\u0000${name}`;
  const recordings = new RecordingStore(executable);
  const forget = (s: EmulatedSession) => {
    sessions.delete(s.runId);
    void recordings.end(s.runId);
    if (s.options.session && s.options.api_key) {
      const k = sessionKey(s.options.api_key, s.options.session);
      if (named.get(k) === s) named.delete(k);
    }
  };

  const vaults = new VaultStore();
  const extensions = new ExtensionStore();

  /**
   * Open a session as a connection with these options asks: its vault opened, its extensions
   * found, a fresh Chromium started; or the named session of this key that is still running.
   */
  const open = async (wanted: ParsedBrowserUrl): Promise<EmulatedSession | Refusal> => {
    const key = wanted.api_key as string;
    const existing = wanted.session ? named.get(sessionKey(key, wanted.session)) : undefined;
    if (existing) return existing;
    const credentials =
      wanted.vault && wanted.vault_key ? vaults.openForSession(key, wanted.vault, wanted.vault_key) : [];
    if (isRefusal(credentials)) return credentials;
    const extensionDirs = wanted.extensions?.length ? extensions.dirs(key, wanted.extensions) : [];
    if (isRefusal(extensionDirs)) return extensionDirs;
    let session: EmulatedSession;
    try {
      session = await EmulatedSession.start(executable, wanted, forget, {
        credentials,
        extensionDirs,
        now: options.now,
        pool,
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return refusal(503, 'ERR::BROWSER::ALLOCATION_FAILED', `could not start a browser: ${message}`, {
        is_retryable: true,
        resource: 'SESSION',
      });
    }
    sessions.set(session.runId, session);
    if (wanted.session) named.set(sessionKey(key, wanted.session), session);
    recordings.begin(session, key, wanted.debug === true);
    return session;
  };

  const rest = new BrowserRestApi({
    apiKeys,
    vaults,
    extensions,
    recordings,
    sessions: {
      list: (key) => [...sessions.values()].filter((s) => s.options.api_key === key),
      find: (key, idOrName) => {
        const s = sessions.get(idOrName) ?? named.get(sessionKey(key, idOrName));
        return s?.options.api_key === key ? s : undefined;
      },
      open,
      browserUrl: () => browserUrl,
    },
  });

  const dashboard = new Dashboard({
    apiKeys,
    sessions: () => sessions.values(),
    crawls: () => crawler.crawls.values(),
    deliveries: () => crawler.deliveries,
    recordings,
    now: options.now ?? Date.now,
  });

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (crawler.handle(req, res)) return;
    if (rest.handle(req, res)) return;
    const url = new URL(req.url ?? '/', 'http://emulator');
    if (req.method === 'GET' && url.pathname === '/emulator/sessions') {
      // The key's own sessions only, and only for a key: a local process without it learns nothing.
      const key = keyOf(url, apiKeys);
      if (isRefusal(key)) return sendError(res, key);
      sendJson(
        res,
        200,
        [...sessions.values()].filter((s) => s.options.api_key === key).map((s) => s.info()),
      );
      return;
    }
    if (dashboard.handle(req, res)) return;
    sendJson(res, 404, errorBody(404, 'ERR::NOT_FOUND', `no route for ${req.method} ${url.pathname}`));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const upgrade = (
    req: IncomingMessage,
    socket: Socket,
    head: Buffer,
    headers: string[],
    then: (ws: import('ws').WebSocket) => void,
  ) => {
    const extra = headers;
    const onHeaders = (h: string[], r: IncomingMessage) => {
      if (r === req) h.push(...extra);
    };
    wss.on('headers', onHeaders);
    wss.handleUpgrade(req, socket, head, (ws) => {
      wss.off('headers', onHeaders);
      then(ws);
    });
  };

  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    void (async () => {
      const url = new URL(req.url ?? '/', `ws://${req.headers.host ?? host}`);
      if (dashboard.upgrade(req, socket, (then) => upgrade(req, socket, head, [], then))) return;
      const view = /^\/run\/([^/]+)\/vnc$/.exec(url.pathname);
      if (view) {
        const session = sessions.get(decodeURIComponent(view[1] as string));
        if (!session) {
          refuseUpgrade(
            socket,
            404,
            errorBody(404, 'ERR::BROWSER::SESSION_NOT_FOUND', 'no running session has this run id'),
          );
        } else if (!session.options.enable_vnc) {
          refuseUpgrade(
            socket,
            403,
            errorBody(403, 'ERR::BROWSER::VNC_NOT_ENABLED', 'the session was opened without enable_vnc'),
          );
        } else upgrade(req, socket, head, [], (ws) => session.attachVnc(ws, req.socket.remoteAddress ?? ''));
        return;
      }
      if (url.pathname !== '/') {
        refuseUpgrade(socket, 404, errorBody(404, 'ERR::BROWSER::NOT_FOUND', `no browser endpoint at ${url.pathname}`));
        return;
      }
      const fault = faults.shift();
      if (fault) {
        const code = `ERR::BROWSER::${fault.code}`;
        const message = fault.message ?? `emulated refusal ${fault.code}`;
        const retryable = fault.retryable ?? (RETRYABLE_BROWSER_CODES as readonly string[]).includes(fault.code);
        if ((fault.mode ?? 'http') === 'http') {
          const status = fault.status ?? 503;
          refuseUpgrade(
            socket,
            status,
            errorBody(status, code, message, { is_retryable: retryable, resource: 'SESSION' }),
          );
        } else {
          upgrade(req, socket, head, [], (ws) => {
            const closeCode = fault.closeCode ?? 1013;
            ws.send(
              JSON.stringify(
                errorBody(closeCode === 1008 ? 400 : 503, code, message, {
                  is_retryable: retryable,
                  resource: 'SESSION',
                }),
              ),
            );
            ws.close(closeCode, `${code}: ${message}`.slice(0, 120));
          });
        }
        return;
      }
      let options: ParsedBrowserUrl;
      try {
        // Parameters newer than this emulator are accepted and listed as ignored (D19).
        options = parseBrowserUrl(url, { unknown: 'keep' });
      } catch (error) {
        const message = isConfigError(error) ? error.issues.map((i) => i.message).join('; ') : 'invalid query';
        refuseUpgrade(socket, 400, errorBody(400, 'ERR::BROWSER::INVALID_OPTIONS', message));
        return;
      }
      if (!options.api_key || !apiKeys.has(options.api_key)) {
        refuseUpgrade(
          socket,
          401,
          errorBody(
            401,
            'ERR::BROWSER::UNAUTHORIZED',
            options.api_key ? 'the API key is not valid' : 'the API key is missing: pass api_key',
          ),
        );
        return;
      }
      const session = await open(options);
      if (isRefusal(session)) {
        refuseUpgrade(socket, session.status, errorBody(session.status, session.code, session.message, session.extra));
        return;
      }
      const headers = [`X-Browser-Run-Id: ${session.runId}`];
      if (options.enable_vnc) {
        headers.push(
          `X-Browser-Project-Salt: ${projectSalt(options.api_key)}`,
          `${EMULATOR_VNC_PORT_HEADER}: ${vnc.port}`,
        );
      }
      const running = session;
      upgrade(req, socket, head, headers, (ws) => running.attach(ws));
    })().catch(() => socket.destroy());
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const vnc = await startVncTcpServer({
    host,
    port: options.vncPort,
    security: (address) => nativeVncSecurity([...sessions.values()], address),
  });
  const origin = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  apiUrl = `http://${origin}`;
  browserUrl = `ws://${origin}/`;
  let closing: Promise<void> | undefined;

  return {
    browserUrl,
    apiUrl,
    apiKey: apiKey as string,
    vncPort: vnc.port,
    dashboardUrl: `${apiUrl}/?key=${encodeURIComponent(apiKey as string)}`,
    sessions: () => [...sessions.values()].map((s) => s.info()),
    stores: () => ({
      vaults: vaults.snapshot(),
      sessions: [...sessions.values()].map((s) => ({ ...s.info(), record: s.record() })),
      extensions: [...apiKeys].map((k) => extensions.list(k)),
    }),
    faults: {
      refuseNext: (fault) => {
        faults.push(fault);
      },
      killBrowser: async (runId) => {
        await sessions.get(runId)?.kill();
      },
      failNextPromptAfter: (tokens) => crawler.failNextPromptAfter(tokens),
    },
    crawler: {
      advanceTime: (ms) => crawler.advanceTime(ms),
      deliveries: crawler.deliveries,
      settled: () => crawler.settled(),
    },
    close() {
      closing ??= (async () => {
        await Promise.all(
          [...sessions.values()].map((s) => s.end({ code: 1001, reason: 'the emulator is shutting down' })),
        );
        await pool.close();
        for (const client of wss.clients) client.terminate();
        wss.close();
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await vnc.close();
        await recordings.close();
        await extensions.close();
      })();
      return closing;
    },
  };
}
