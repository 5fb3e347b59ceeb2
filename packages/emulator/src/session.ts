/** One emulated cloud browser session: a local Chromium, its control connection, its clients. */
import { randomBytes } from 'node:crypto';
import { type ParsedBrowserUrl, projectSalt, REDACTED, redactUrl, SECRET_OPTIONS } from 'cloud-browser';
import WebSocket from 'ws';
import { CredentialInjector } from './browser-api/inject.js';
import type { OpenedItem } from './browser-api/vaults.js';
import { CdpClient } from './cdp.js';
import { type LaunchedChromium, launchChromium } from './chromium.js';
import { IdentityApplier } from './identity/apply.js';
import { identityOf } from './identity/identity.js';
import type { WarmPool } from './pool.js';
import { type ChainProxy, startChainProxy } from './proxy.js';
import { ServiceDomains } from './service/index.js';
import { allowedNetworks, inNetworks, sameSecret } from './vnc/access.js';
import {
  type Frame,
  type PageSessions,
  type RfbSecurity,
  type RfbTarget,
  Screencast,
  serveVncWebSocket,
} from './vnc/index.js';

/** The session's open pages (CDP session ids, newest last), for the VNC view. */
class PageList implements PageSessions {
  readonly ids: string[] = [];
  private readonly listeners = new Set<() => void>();

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  add(id: string): void {
    this.ids.push(id);
    for (const l of this.listeners) l();
  }

  remove(id: string): void {
    const at = this.ids.indexOf(id);
    if (at === -1) return;
    this.ids.splice(at, 1);
    for (const l of this.listeners) l();
  }
}

/** What `sessions()` shows of a session: its options with every secret redacted. */
export interface EmulatorSessionInfo {
  runId: string;
  session: string | undefined;
  options: Record<string, unknown>;
  /** Query parameters the emulator does not know: accepted, honoured in nothing (docs/decisions.md D19). */
  ignored: string[];
  startedAt: string;
  clients: number;
  pid: number;
  /** The session's MCP endpoint (no key in it), when it was opened with `enable_mcp`. */
  mcpEndpoint?: string;
}

/** A copy of the options safe to show: secrets `***`, the proxy password redacted. */
export function redactOptions(options: ParsedBrowserUrl): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) {
    if (k === 'ignored') continue;
    // The proxy's address is useful to see; only its password is hidden.
    if (k === 'byop_proxy' && typeof v === 'string') out[k] = redactUrl(v);
    else if ((SECRET_OPTIONS as readonly string[]).includes(k)) out[k] = REDACTED;
    else out[k] = v;
  }
  return out;
}

const BLOCKED_TYPES: [keyof ParsedBrowserUrl, string[]][] = [
  ['block_images', ['Image']],
  ['block_styles', ['Stylesheet']],
  ['block_fonts', ['Font']],
  ['block_media', ['Media']],
];

/** The languages pages see: `languages`, else the single `lang` (the service derives one from the other). */
function acceptLanguages(options: ParsedBrowserUrl): readonly string[] | undefined {
  return options.languages ?? (options.lang ? [options.lang] : undefined);
}

/** The session's `resolution` (`WIDTHxHEIGHT`), when it was given. */
function resolutionOf(options: ParsedBrowserUrl): { width: number; height: number } | undefined {
  const match = options.resolution ? /^(\d{2,5})x(\d{2,5})$/.exec(options.resolution) : null;
  return match ? { width: Number(match[1]), height: Number(match[2]) } : undefined;
}

/** What a session starts with besides its options. */
export interface SessionExtras {
  /** The vault's items, opened for this session. */
  credentials?: readonly OpenedItem[] | undefined;
  /** Unpacked extensions to run. */
  extensionDirs?: readonly string[] | undefined;
  /** The clock of one-time codes. @default Date.now */
  now?: (() => number) | undefined;
  /** Browsers already started, for sessions whose options need no launch flag. */
  pool?: WarmPool | undefined;
}

/** Why a session ended, as its clients are told (docs/decisions.md D6 for failures). */
interface Ending {
  code: number;
  reason: string;
  frame?: Record<string, unknown>;
}

/** A running emulated session. */
export class EmulatedSession {
  readonly runId = `run-${randomBytes(8).toString('hex')}`;
  readonly startedAt = new Date();
  private readonly clients = new Set<WebSocket>();
  /** How to close each VNC viewer, whatever carries it. */
  private readonly viewers = new Set<(reason: string) => void>();
  private readonly screencast: Screencast;
  private readonly hitl: ReturnType<typeof allowedNetworks>;
  /** What a VNC viewer of this session watches. */
  readonly vncTarget: RfbTarget;
  private ending: Ending | undefined;
  private closeRequested = false;
  private timer: NodeJS.Timeout | undefined;
  readonly ended: Promise<void>;
  private resolveEnded!: () => void;
  /** The session's MCP endpoint (no key in it), when it was opened with `enable_mcp`. */
  mcpEndpoint: string | undefined;

  private constructor(
    readonly options: ParsedBrowserUrl,
    private readonly chromium: LaunchedChromium,
    private readonly control: CdpClient,
    private readonly proxy: ChainProxy | undefined,
    private readonly onEnd: (s: EmulatedSession) => void,
    private readonly pages: PageSessions,
    /** The service's own domains (Antibot, ScrapiumBrowser, Page.getRenderedContent). */
    readonly service: ServiceDomains,
  ) {
    this.screencast = new Screencast(control, pages);
    this.hitl = allowedNetworks(options.hitl_allowed_networks);
    this.vncTarget = {
      name: `cloud-browser ${this.runId}`,
      screencast: this.screencast,
      attach: (close) => {
        this.viewers.add(close);
        return () => this.viewers.delete(close);
      },
    };
    this.ended = new Promise((resolve) => {
      this.resolveEnded = resolve;
    });
    void chromium.exited.then(() => this.browserExited());
    if (options.timeout !== undefined) {
      this.timer = setTimeout(
        () =>
          void this.end({
            code: 1000,
            reason: `ERR::BROWSER::SESSION_TIMEOUT: the session reached its timeout of ${options.timeout} s`,
          }),
        options.timeout * 1000,
      );
    }
  }

  /** Start Chromium with the options a local browser can honour, and its control connection. */
  static async start(
    executable: string,
    options: ParsedBrowserUrl,
    onEnd: (s: EmulatedSession) => void,
    extras: SessionExtras = {},
  ): Promise<EmulatedSession> {
    const args: string[] = [];
    if (extras.extensionDirs?.length) {
      const dirs = extras.extensionDirs.join(',');
      args.push(`--disable-extensions-except=${dirs}`, `--load-extension=${dirs}`);
    }
    const size = resolutionOf(options);
    if (size) args.push(`--window-size=${size.width},${size.height}`);
    const lang = options.lang ?? options.languages?.[0];
    if (lang) args.push(`--lang=${lang}`);
    const languages = acceptLanguages(options);
    if (languages) args.push(`--accept-lang=${languages.join(',')}`);
    let proxy: ChainProxy | undefined;
    if (options.byop_proxy) {
      proxy = await startChainProxy(options.byop_proxy);
      // Chromium skips the proxy for loopback unless told not to; the emulator's sites are on loopback.
      args.push(`--proxy-server=${proxy.url}`, '--proxy-bypass-list=<-loopback>');
    }
    let chromium: LaunchedChromium | undefined;
    let control: CdpClient | undefined;
    let service: ServiceDomains | undefined;
    try {
      // Only a browser without launch flags can come from the pool (README: the warm path).
      const warm = args.length === 0 ? await extras.pool?.take() : undefined;
      chromium = warm && !warm.hasExited() ? warm : await launchChromium(executable, args);
      control = CdpClient.open(chromium.pipe);
      const pages = new PageList();
      service = new ServiceDomains(control, options.solve_captcha === true);
      await service.start();
      const injector = new CredentialInjector(control, extras.credentials ?? [], extras.now);
      await EmulatedSession.prepare(control, options, pages, injector, service);
      return new EmulatedSession(options, chromium, control, proxy, onEnd, pages, service);
    } catch (error) {
      service?.close();
      control?.close();
      await chromium?.kill();
      await proxy?.close();
      throw error;
    }
  }

  /** Apply the identity, blocking and credentials to every target as it appears, then open `target_url`. */
  private static async prepare(
    control: CdpClient,
    options: ParsedBrowserUrl,
    pages: PageList,
    injector: CredentialInjector,
    service: ServiceDomains,
  ): Promise<void> {
    const patterns = BLOCKED_TYPES.filter(([k]) => options[k] === true).flatMap(([, types]) =>
      types.map((resourceType) => ({ resourceType, requestStage: 'Request' })),
    );
    const size = resolutionOf(options);
    const { product } = await control.send<{ product: string }>('Browser.getVersion');
    const identity = new IdentityApplier(control, identityOf(options, product), size !== undefined);
    service.identity = identity.identity;
    let firstPage: ((sessionId: string) => void) | undefined;
    const firstPageSession = new Promise<string>((resolve) => {
      firstPage = resolve;
    });
    // Every target, the page's frames and workers too, waits for this before it runs.
    control.on('Target.attachedToTarget', (params) => {
      const sessionId = params.sessionId as string;
      const info = params.targetInfo as { type: string; targetId: string; browserContextId?: string };
      let ready!: () => void;
      service.prepare(
        info.targetId,
        new Promise<void>((resolve) => {
          ready = resolve;
        }),
      );
      void (async () => {
        // Its out-of-process frames and workers are attached as they appear and held until the
        // identity is on them too: set before it runs, or a worker it starts at once is missed.
        if (info.type === 'page' || info.type === 'iframe') {
          await control
            .send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }, sessionId)
            .catch(() => {});
        }
        await identity.apply(sessionId, info.type, info.browserContextId);
        if (info.type === 'page' || info.type === 'iframe') await service.webmcp.prepare(sessionId);
        if (info.type === 'page') {
          await EmulatedSession.preparePage(control, sessionId, patterns, size, injector);
          pages.add(sessionId);
          firstPage?.(sessionId);
          firstPage = undefined;
        }
        ready();
        await control.send('Runtime.runIfWaitingForDebugger', {}, sessionId);
      })()
        .catch(() => {})
        .finally(() => ready());
    });
    control.on('Target.detachedFromTarget', (params) => pages.remove(params.sessionId as string));
    control.on('Fetch.requestPaused', (params, sessionId) => {
      void control
        .send('Fetch.failRequest', { requestId: params.requestId, errorReason: 'BlockedByClient' }, sessionId)
        .catch(() => {});
    });
    // Cookies first: the first page's first request carries them.
    await injector.beforeFirstPage();
    await control.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true });
    if (options.target_url) {
      const sessionId = await firstPageSession;
      await control.send('Page.enable', {}, sessionId);
      const loaded = new Promise<void>((resolve) => {
        control.on('Page.loadEventFired', (_p, sid) => {
          if (sid === sessionId) resolve();
        });
      });
      await control.send('Page.navigate', { url: options.target_url }, sessionId);
      await Promise.race([loaded, new Promise((r) => setTimeout(r, 10_000))]);
    }
  }

  /** A page, before it runs: its blocked resources, its viewport, its credentials. */
  private static async preparePage(
    control: CdpClient,
    sessionId: string,
    patterns: { resourceType: string; requestStage: string }[],
    size: { width: number; height: number } | undefined,
    injector: CredentialInjector,
  ): Promise<void> {
    if (patterns.length > 0) await control.send('Fetch.enable', { patterns }, sessionId);
    // The window size alone leaves newer Chromium (156) a smaller viewport: pin the page's.
    if (size) {
      await control.send(
        'Emulation.setDeviceMetricsOverride',
        { width: size.width, height: size.height, deviceScaleFactor: 0, mobile: false },
        sessionId,
      );
    }
    if (!injector.empty) await injector.onPage(sessionId);
  }

  get pid(): number {
    return this.chromium.pid;
  }

  /** The session as the REST side lists it (docs/decisions.md D20). */
  record(): Record<string, unknown> {
    const { browser_url: _b, ...options } = redactOptions(this.options);
    return {
      run_id: this.runId,
      session: this.options.session ?? null,
      started_at: this.startedAt.toISOString(),
      options,
      auto_close: this.options.auto_close !== false,
    };
  }

  info(): EmulatorSessionInfo {
    return {
      runId: this.runId,
      session: this.options.session,
      options: redactOptions(this.options),
      ignored: this.options.ignored ?? [],
      startedAt: this.startedAt.toISOString(),
      clients: this.clients.size,
      pid: this.chromium.pid,
      ...(this.mcpEndpoint ? { mcpEndpoint: this.mcpEndpoint } : {}),
    };
  }

  /** Whether a client that leaves keeps the browser running (a named session with `auto_close: false`). */
  get keepsRunning(): boolean {
    return this.options.auto_close === false && this.options.session !== undefined;
  }

  /**
   * Relay a client's socket to the browser, as a client of its own on the browser's DevTools pipe.
   * An uncounted client (the MCP endpoint's own Playwright) does not keep the session open.
   */
  attach(client: WebSocket, counted = true): void {
    if (this.ending) {
      client.close(1011, 'ERR::BROWSER::SESSION_TERMINATED: the session has ended');
      return;
    }
    if (counted) this.clients.add(client);
    const upstream = this.chromium.pipe.open();
    this.service.join(upstream);
    upstream.onmessage = (data) => {
      if (client.readyState === WebSocket.OPEN) client.send(data, { binary: false });
    };
    client.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) return;
      if (data.length < 4096 && data.includes('"Browser.close"')) this.closeRequested = true;
      upstream.send(data);
    });
    client.on('error', () => {});
    client.on('close', () => {
      this.clients.delete(client);
      this.service.leave(upstream);
      upstream.close();
      if (counted && this.clients.size === 0 && !this.keepsRunning && !this.ending) {
        void this.end({ code: 1000, reason: 'client disconnected' });
      }
    });
  }

  /** The session's `resolution`, when it was given. */
  get size(): { width: number; height: number } | undefined {
    return resolutionOf(this.options);
  }

  /** Receive every picture the session shows (its newest page's screencast); returns a way to stop. */
  watch(viewer: (frame: Frame) => void): () => void {
    void this.screencast.join(viewer).then((first) => {
      if (first) viewer(first);
    });
    return () => this.screencast.leave(viewer);
  }

  /** A small JPEG of the newest page, for the dashboard; undefined when no page is open. */
  async thumbnail(): Promise<Buffer | undefined> {
    const page = this.pages.ids.at(-1);
    if (!page || this.ending) return undefined;
    const shot = await this.control
      .send<{ data: string }>('Page.captureScreenshot', { format: 'jpeg', quality: 50 }, page)
      .catch(() => undefined);
    return shot ? Buffer.from(shot.data, 'base64') : undefined;
  }

  /** Whether a VNC client at `address` may watch without a password (`hitl_allowed_networks`, docs/decisions.md D5). */
  allowsWithoutPassword(address: string): boolean {
    return this.options.enable_vnc === true && inNetworks(this.hitl, address);
  }

  /**
   * Whether the native port's Plain credentials open this session: username the run id, password
   * `<salt>-<vnc_password>` (docs/decisions.md D5). Compared in constant time.
   */
  opensNativeVnc(username: string, password: string): boolean {
    const expected = this.options.vnc_password
      ? `${projectSalt(this.options.api_key ?? '')}-${this.options.vnc_password}`
      : undefined;
    const ok = sameSecret(password, expected ?? password);
    return ok && expected !== undefined && username === this.runId && this.options.enable_vnc === true && !this.ending;
  }

  /** What the WebSocket view offers a client at `address`: None in `hitl_allowed_networks`, VNC authentication with a password. */
  vncSecurity(address: string): RfbSecurity {
    const security: RfbSecurity = {};
    if (this.allowsWithoutPassword(address)) security.none = this.vncTarget;
    if (this.options.vnc_password) security.vncAuth = { password: this.options.vnc_password, target: this.vncTarget };
    return security;
  }

  /** Serve a WebSocket VNC viewer from `address` (the server checked that the session has `enable_vnc`). */
  attachVnc(viewer: WebSocket, address: string): void {
    if (this.ending) {
      viewer.close(1011, 'ERR::BROWSER::SESSION_TERMINATED: the session has ended');
      return;
    }
    // Closed when the session ends, let in or not yet.
    const close = (reason: string) => viewer.close(1000, reason);
    this.viewers.add(close);
    viewer.on('close', () => this.viewers.delete(close));
    serveVncWebSocket(viewer, this.vncSecurity(address));
  }

  /** Kill the browser as a crash would: clients get an error frame and a 1011 close. */
  async kill(): Promise<void> {
    await this.chromium.kill();
    await this.ended;
  }

  private browserExited(): void {
    if (!this.ending) {
      this.ending = this.closeRequested
        ? { code: 1000, reason: 'the browser was closed' }
        : {
            code: 1011,
            reason: 'ERR::BROWSER::SESSION_TERMINATED: the browser process exited',
            frame: {
              message: 'the browser process exited',
              code: 'ERR::BROWSER::SESSION_TERMINATED',
              http_status_code: 500,
              resource: 'SESSION',
              is_retryable: false,
            },
          };
    }
    void this.finish();
  }

  /** End the session: tell every client why, kill the browser, free everything. */
  async end(ending: Ending): Promise<void> {
    this.ending ??= ending;
    await this.chromium.kill();
    await this.ended;
  }

  private async finish(): Promise<void> {
    const ending = this.ending ?? { code: 1000, reason: 'ended' };
    if (this.timer) clearTimeout(this.timer);
    for (const client of this.clients) {
      if (ending.frame && client.readyState === WebSocket.OPEN) client.send(JSON.stringify(ending.frame));
      client.close(ending.code, ending.reason.slice(0, 120));
    }
    for (const close of [...this.viewers]) close('the session has ended');
    this.control.close();
    this.service.close();
    await this.proxy?.close();
    this.onEnd(this);
    this.resolveEnded();
  }
}
