/** The emulator's server: browser WebSocket upgrades, and its own HTTP endpoints. */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ConfigError } from 'cloud-browser';
import { numberIssues } from 'cloud-browser/internal';
import { ExtensionStore } from './browser-api/extensions.js';
import { BrowserRestApi } from './browser-api/routes.js';
import { VaultStore } from './browser-api/vaults.js';
import { findChromium } from './chromium.js';
import { CrawlerApi } from './crawler/api.js';
import { CRAWL_LIMITS_DEFAULTS, type CrawlLimits } from './crawler/crawl.js';
import type { DeliveryRecord, EmulatorWebhook } from './crawler/deliveries.js';
import { Dashboard } from './dashboard/routes.js';
import { refusal } from './http.js';
import { McpEndpoints } from './mcp.js';
import { type Part, Parts } from './parts.js';
import { DEFAULT_WARM_BROWSERS, WarmPool } from './pool.js';
import { RecordingStore } from './recording/store.js';
import { Router } from './router.js';
import { serveTestCaptchas } from './service/widgets.js';
import type { EmulatedSession, EmulatorSessionInfo } from './session.js';
import { SessionRegistry } from './sessions.js';
import { type RefusalFault, Upgrades } from './upgrades.js';

export { EMULATOR_MCP_ENDPOINT_HEADER } from './mcp.js';
export { EMULATOR_VNC_PORT_HEADER, type RefusalFault } from './upgrades.js';

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
   * The native VNC port (docs/decisions.md D5). When taken, any free port; 0 picks a free port at once.
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
    /** The next captcha the session solves fails with `message` (a `captchaError` and a `failed` record). */
    failNextCaptcha(runId: string, message?: string): void;
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
  checkOptions(options);
  const host = options.host ?? '127.0.0.1';
  const apiKeys = new Set(options.apiKeys?.length ? options.apiKeys : [`emu-${randomBytes(16).toString('hex')}`]);
  const executable = await findChromium(options.chromiumPath);
  const parts = new Parts();
  try {
    return await startParts(parts, { ...options, host }, apiKeys, executable);
  } catch (error) {
    await parts.stopAll().catch(() => undefined);
    throw error;
  }
}

/** Every numeric option in range, else a ConfigError naming each. */
function checkOptions(options: EmulatorOptions): void {
  const issues = numberIssues({
    port: [options.port, { min: 0, max: 65535, unit: 'port' }],
    vncPort: [options.vncPort, { min: 0, max: 65535, unit: 'port' }],
    'crawler.maxResponseBytes': [options.crawler?.maxResponseBytes, { min: 1024, max: 2 ** 31 - 1, unit: 'bytes' }],
    'crawler.pageLimit': [options.crawler?.pageLimit, { min: 1, max: 10_000_000, unit: 'pages' }],
    warmBrowsers: [options.warmBrowsers, { min: 0, max: 16, unit: 'browsers' }],
  });
  if (issues.length > 0) throw new ConfigError('emulator options', issues);
}

/**
 * Start the parts in the order they depend on each other; `parts` stops them in reverse: the
 * server stops taking connections first, then the VNC server, the crawler (its runs and webhook
 * deliveries), the sessions (each closes its clients with 1001), their pool, the recorder and the
 * stores; last, the connections still open are cut.
 */
async function startParts(
  parts: Parts,
  options: EmulatorOptions & { host: string },
  apiKeys: ReadonlySet<string>,
  executable: string,
): Promise<Emulator> {
  // Registered first, so stopped last: once every session has closed its clients with 1001,
  // whatever is still open is cut.
  const connections = parts.add(new OpenConnections());
  const extensions = parts.adopt('extension store', new ExtensionStore(), (x) => x.close());
  const vaults = new VaultStore();
  const recordings = parts.adopt('recorder', new RecordingStore(executable), (r) => r.close());
  const pool = parts.adopt('warm pool', new WarmPool(executable, options.warmBrowsers ?? DEFAULT_WARM_BROWSERS), (p) =>
    p.close(),
  );
  const sessions: SessionRegistry = parts.add(
    new SessionRegistry({
      executable,
      pool,
      vaults,
      extensions,
      recordings,
      now: options.now,
      mcpEndpoint: (s: EmulatedSession): string | undefined => mcp.address(s),
    }),
  );
  // Known once the server listens; the crawler's answers and the REST side link back to it.
  const urls = { api: '', browser: '' };
  const mcp = parts.adopt('MCP endpoints', new McpEndpoints(sessions, urls), (m) => m.close());
  const crawler = parts.adopt(
    'crawler',
    new CrawlerApi({
      webhooks: options.webhooks,
      now: options.now,
      apiUrl: () => urls.api,
      limits: {
        maxResponseBytes: options.crawler?.maxResponseBytes ?? CRAWL_LIMITS_DEFAULTS.maxResponseBytes,
        pageLimit: options.crawler?.pageLimit ?? CRAWL_LIMITS_DEFAULTS.pageLimit,
      },
    }),
    (c) => c.close(),
  );
  const rest = new BrowserRestApi({
    vaults,
    extensions,
    recordings,
    sessions: sessions.host(() => urls.browser),
  });
  const dashboard = new Dashboard({
    apiKeys,
    sessions: () => sessions.all().values(),
    crawls: () => crawler.crawls.values(),
    deliveries: () => crawler.deliveries,
    recordings,
    now: options.now ?? Date.now,
  });
  const vnc = parts.adopt(
    'VNC server',
    await startVncTcpServer({
      host: options.host,
      port: options.vncPort,
      security: (address) => nativeVncSecurity(sessions.all(), address),
    }),
    (v) => v.close(),
  );
  const router = routerOf({ apiKeys, crawler, rest, sessions, mcp, dashboard });
  const upgrades = new Upgrades({ host: options.host, apiKeys, sessions, dashboard, mcp, vncPort: () => vnc.port });
  connections.atEnd(() => upgrades.close());
  const server = parts.add(await listen(options, router, upgrades, connections));
  urls.api = `http://${server.origin}`;
  urls.browser = `ws://${server.origin}/`;
  return emulatorOf({ parts, urls, apiKeys, vnc, sessions, vaults, extensions, crawler, upgrades });
}

/** Every HTTP path of the emulator, to the part that serves it. */
function routerOf(p: {
  apiKeys: ReadonlySet<string>;
  crawler: CrawlerApi;
  rest: BrowserRestApi;
  sessions: SessionRegistry;
  mcp: McpEndpoints;
  dashboard: Dashboard;
}): Router {
  return (
    new Router(p.apiKeys)
      .keyed(CrawlerApi.PREFIXES, (r) => p.crawler.route(r))
      .keyed(BrowserRestApi.PREFIXES, (r) => p.rest.route(r))
      // The key's own sessions only, and only for a key: a local process without it learns nothing.
      .keyed(['/emulator/sessions'], async ({ req, url, key }) =>
        req.method === 'GET'
          ? [200, p.sessions.of(key).map((s) => s.info())]
          : refusal(404, 'ERR::NOT_FOUND', `no route for ${req.method} ${url.pathname}`),
      )
      .open((req, res) => p.mcp.handle(req, res, p.apiKeys))
      .open(serveTestCaptchas)
      .open((req, res) => p.dashboard.handle(req, res))
  );
}

/** The emulator's open sockets: cut last, after every part that says goodbye on them has. */
class OpenConnections implements Part {
  readonly name = 'open connections';
  readonly #sockets = new Set<Socket>();
  readonly #atEnd: (() => Promise<void> | void)[] = [];

  track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
  }

  /** Something to end once the sockets are cut (the WebSocket clients, the server's close). */
  atEnd(end: () => Promise<void> | void): void {
    this.#atEnd.push(end);
  }

  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    for (const end of this.#atEnd) await end();
  }
}

/**
 * The HTTP server, listening: requests to the router, upgrades to the upgrades part. Stopping it
 * stops taking connections; the ones open are cut by {@link OpenConnections}, last.
 */
async function listen(
  options: EmulatorOptions & { host: string },
  router: Router,
  upgrades: Upgrades,
  connections: OpenConnections,
): Promise<Part & { origin: string }> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => router.handle(req, res));
  server.on('connection', (socket) => connections.track(socket));
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => upgrades.handle(req, socket, head));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host, () => resolve());
  });
  const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
  connections.atEnd(() => closed);
  const { port } = server.address() as AddressInfo;
  return {
    name: 'HTTP server',
    origin: `${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    stop: () => void server.close(),
  };
}

/** The parts an {@link Emulator} shows its user. */
interface Started {
  parts: Parts;
  urls: { api: string; browser: string };
  apiKeys: ReadonlySet<string>;
  vnc: { port: number };
  sessions: SessionRegistry;
  vaults: VaultStore;
  extensions: ExtensionStore;
  crawler: CrawlerApi;
  upgrades: Upgrades;
}

function emulatorOf({ parts, urls, apiKeys, vnc, sessions, vaults, extensions, crawler, upgrades }: Started): Emulator {
  const [apiKey] = apiKeys;
  return {
    browserUrl: urls.browser,
    apiUrl: urls.api,
    apiKey: apiKey as string,
    vncPort: vnc.port,
    dashboardUrl: `${urls.api}/?key=${encodeURIComponent(apiKey as string)}`,
    sessions: () => sessions.all().map((s) => s.info()),
    stores: () => ({
      vaults: vaults.snapshot(),
      sessions: sessions.all().map((s) => ({ ...s.info(), record: s.record() })),
      extensions: [...apiKeys].map((k) => extensions.list(k)),
    }),
    faults: {
      refuseNext: (fault) => upgrades.refuseNext(fault),
      killBrowser: async (runId) => {
        await sessions.byRunId(runId)?.kill();
      },
      failNextPromptAfter: (tokens) => crawler.failNextPromptAfter(tokens),
      failNextCaptcha: (runId, message = 'the solver failed (a fault the test asked for)') => {
        const session = sessions.byRunId(runId);
        if (!session) throw new RangeError(`no session ${runId} is running`);
        session.service.captchas.failNext = message;
      },
    },
    crawler: {
      advanceTime: (ms) => crawler.advanceTime(ms),
      deliveries: crawler.deliveries,
      settled: () => crawler.settled(),
    },
    close: () => parts.stopAll(),
  };
}
