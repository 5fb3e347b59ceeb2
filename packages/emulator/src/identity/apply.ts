/**
 * The session's identity put on each of its targets as it appears, before it runs (the
 * emulator's auto-attach waits for it): pages and out-of-process frames get the user agent,
 * client hints, language, locale and time zone, a page its place and its phone's screen; a
 * worker, which has no Emulation domain, its user agent, hints and language through Network.
 */
import type { CdpClient } from '../cdp.js';
import type { Identity } from './identity.js';

/** Target types that run a page's scripts. */
const PAGE_LIKE = new Set(['page', 'iframe']);
/** Target types that run a worker's scripts. */
const WORKERS = new Set(['worker', 'shared_worker', 'service_worker']);

/** A worker's `navigator.platform`, as the session's pages report it. */
function workerPlatform(platform: string): string {
  return `Object.defineProperty(WorkerNavigator.prototype, 'platform', { get: { platform() { return ${JSON.stringify(platform)}; } }.platform, configurable: true, enumerable: true })`;
}

/** Puts one identity on targets, and grants geolocation in each browser context once. */
export class IdentityApplier {
  /** The browser context of each page session, for grants by origin. */
  private readonly contexts = new Map<string, string | undefined>();

  constructor(
    private readonly control: CdpClient,
    readonly identity: Identity,
    /** Whether the session's own `resolution` sizes its pages (then no phone screen). */
    private readonly sized: boolean,
  ) {
    // Some builds (a headless shell) honour a grant only for an origin: each origin a page
    // shows is granted as it commits.
    if (identity.geolocation) {
      control.on('Page.frameNavigated', (params, sessionId) => {
        if (sessionId === undefined || !this.contexts.has(sessionId)) return;
        const url = (params.frame as { url?: string } | undefined)?.url ?? '';
        void this.grantOrigin(url, this.contexts.get(sessionId));
      });
    }
  }

  private async grantOrigin(url: string, browserContextId: string | undefined): Promise<void> {
    let origin: string;
    try {
      origin = new URL(url).origin;
    } catch {
      return;
    }
    if (origin === 'null') return;
    // The default context as the browser names it, and by its id (a headless shell tells them apart).
    const grant = (context: object) =>
      this.control
        .send('Browser.grantPermissions', { origin, permissions: ['geolocation'], ...context })
        .catch(() => {});
    await Promise.all([grant({}), browserContextId ? grant({ browserContextId }) : undefined]);
  }

  /** Apply to one target; errors of a target that went away are ignored. */
  async apply(sessionId: string, type: string, browserContextId: string | undefined): Promise<void> {
    const id = this.identity;
    const agent = {
      userAgent: id.userAgent,
      platform: id.platform,
      userAgentMetadata: id.metadata,
      ...(id.acceptLanguage ? { acceptLanguage: id.acceptLanguage } : {}),
    };
    const send = (method: string, params: Record<string, unknown>) =>
      this.control.send(method, params, sessionId).catch(() => undefined);
    if (WORKERS.has(type)) {
      await send('Network.setUserAgentOverride', agent);
      await this.beforeWorkerScript(sessionId, workerPlatform(id.platform));
      return;
    }
    if (!PAGE_LIKE.has(type)) return;
    const steps: Promise<unknown>[] = [send('Emulation.setUserAgentOverride', agent)];
    if (id.locale) steps.push(send('Emulation.setLocaleOverride', { locale: id.locale }));
    if (id.timezoneId) steps.push(send('Emulation.setTimezoneOverride', { timezoneId: id.timezoneId }));
    if (type === 'page') {
      if (id.geolocation) {
        this.contexts.set(sessionId, browserContextId);
        steps.push(send('Emulation.setGeolocationOverride', id.geolocation), this.grant(browserContextId));
      }
      if (id.screen && !this.sized) {
        steps.push(
          send('Emulation.setDeviceMetricsOverride', id.screen),
          send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 5 }),
        );
      }
    }
    await Promise.all(steps);
  }

  /**
   * Run `expression` in a worker just before its own script: Chromium carries no platform
   * override into workers, and a worker paused at its start has not made the global scope its
   * script will run in yet, so the worker is paused once more where its script begins.
   */
  private async beforeWorkerScript(sessionId: string, expression: string): Promise<void> {
    const send = (method: string, params: Record<string, unknown> = {}) =>
      this.control.send<Record<string, unknown>>(method, params, sessionId).catch(() => undefined);
    await send('Debugger.enable');
    const set = await send('Debugger.setInstrumentationBreakpoint', { instrumentation: 'beforeScriptExecution' });
    const stop = this.control.on('Debugger.paused', (_params, sid) => {
      if (sid !== sessionId) return;
      stop();
      void (async () => {
        await send('Runtime.evaluate', { expression });
        if (set?.breakpointId) await send('Debugger.removeBreakpoint', { breakpointId: set.breakpointId });
        await send('Debugger.resume');
        await send('Debugger.disable');
      })();
    });
  }

  /**
   * Geolocation allowed in the page's browser context (the default context has no id), at each
   * page: a client may reset the context's permissions when it connects.
   */
  private async grant(browserContextId: string | undefined): Promise<void> {
    const context = browserContextId ? { browserContextId } : {};
    await this.control
      .send('Browser.setPermission', { permission: { name: 'geolocation' }, setting: 'granted', ...context })
      .catch(() => this.control.send('Browser.grantPermissions', { permissions: ['geolocation'], ...context }))
      .catch(() => {});
  }
}
