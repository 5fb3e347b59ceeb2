/**
 * The service browser's own domains on an emulated session (docs/wire.md §10): `Antibot` (human
 * input, element location, captchas), `ScrapiumBrowser` (downloads) and `Page.getRenderedContent`,
 * answered by the emulator on the same CDP connection as Chromium's own domains. Each client's
 * commands of these domains are checked against the one description of them in `cloud-browser`
 * (a wrong parameter is a protocol error naming it, as Chromium answers) and carried out on the
 * page of the session the client sent them on; their events reach every client session on that page.
 */

import { resolve, sep } from 'node:path';
import {
  isServiceCommand,
  paramsProblem,
  type ServiceCommand,
  type ServiceEvent,
  type ServiceEventParams,
  type ServiceParams,
} from 'cloud-browser';
import type { CdpClient } from '../cdp.js';
import type { CdpChannel, ClientRequest } from '../cdp-pipe.js';
import type { Identity } from '../identity/identity.js';
import { Antibot, BadParams } from './antibot.js';
import { Captchas } from './captchas.js';
import { Downloads } from './downloads.js';
import { RenderedContent } from './rendered.js';
import { Targets } from './targets.js';
import { WebMcp } from './webmcp.js';

/** Chromium's code for parameters a command cannot take, and for a command that failed. */
const INVALID_PARAMS = -32602;
const FAILED = -32000;

type Result = Record<string, unknown>;

/** A session's own domains, for every client of the session. */
export class ServiceDomains {
  readonly targets: Targets;
  readonly downloads: Downloads;
  readonly captchas: Captchas;
  readonly webmcp: WebMcp;
  private readonly rendered: RenderedContent;
  private readonly antibots = new Map<string, Antibot>();
  private readonly channels = new Set<CdpChannel>();
  private readonly identified = new WeakMap<CdpChannel, Set<string>>();
  /** The client sessions that enabled WebMCP: its events go to them only. */
  private readonly webmcpOn = new WeakMap<CdpChannel, Set<string>>();
  /** The session's identity, once known (docs/decisions.md D29). */
  identity: Identity | undefined;

  constructor(
    private readonly control: CdpClient,
    solveCaptcha: boolean,
  ) {
    this.targets = new Targets(control);
    this.downloads = new Downloads(control);
    this.rendered = new RenderedContent(control, this.targets);
    this.captchas = new Captchas(control, this.targets, (page) => this.antibot(page), this.emit, solveCaptcha);
    this.webmcp = new WebMcp(control, this.targets, this.emit);
  }

  /** Before the first page: downloads into the session's folder. */
  async start(): Promise<void> {
    await this.downloads.start();
  }

  /** A client's channel: its commands of these domains are answered here. */
  join(channel: CdpChannel): void {
    this.channels.add(channel);
    channel.intercept = (request) => this.intercept(channel, request);
  }

  leave(channel: CdpChannel): void {
    this.channels.delete(channel);
  }

  /** The session ended: its downloads go. */
  close(): void {
    this.downloads.close();
  }

  private antibot(page: string): Antibot {
    let antibot = this.antibots.get(page);
    if (!antibot) {
      antibot = new Antibot(this.control, this.targets, page);
      this.antibots.set(page, antibot);
    }
    return antibot;
  }

  /** Tell every client session on `page` an event; WebMCP's go only to the sessions that enabled it. */
  private readonly emit = <E extends ServiceEvent>(page: string, event: E, params: ServiceEventParams<E>): void => {
    const targetId = this.targets.targetOf(page);
    if (!targetId) return;
    const enabledOnly = event.startsWith('WebMCP.');
    for (const channel of this.channels) {
      const on = this.webmcpOn.get(channel);
      for (const s of channel.sessionsOf(targetId)) if (!enabledOnly || on?.has(s)) channel.emit(s, event, params);
    }
  };

  /** `WebMCP.enable` and `disable` on a client session; enabling tells it every tool already registered. */
  private switchWebMcp(channel: CdpChannel, request: ClientRequest, page: string): Result {
    const on = this.webmcpOn.get(channel) ?? new Set<string>();
    this.webmcpOn.set(channel, on);
    if (request.method === 'WebMCP.disable') {
      on.delete(request.sessionId as string);
      return {};
    }
    on.add(request.sessionId as string);
    const tools = this.webmcp.toolsOf(page);
    if (tools.length) setImmediate(() => channel.emit(request.sessionId, 'WebMCP.toolsAdded', { tools }));
    return {};
  }

  /**
   * A client's first command on a page or frame: the session's identity goes on that session
   * first. Chromium keeps `navigator.platform` per DevTools session in the renderer, and a
   * session attached after the emulator's own starts without it.
   */
  private identify(channel: CdpChannel, request: ClientRequest): void {
    if (!this.identity || request.sessionId === undefined || request.targetId === undefined) return;
    const seen = this.identified.get(channel) ?? new Set<string>();
    this.identified.set(channel, seen);
    if (seen.has(request.sessionId)) return;
    seen.add(request.sessionId);
    const type = this.targets.typeOf(request.targetId);
    const domain =
      type === 'page' || type === 'iframe' ? 'Emulation' : type?.endsWith('worker') ? 'Network' : undefined;
    if (!domain) return;
    const { userAgent, platform, metadata, acceptLanguage } = this.identity;
    const agent = { userAgent, platform, userAgentMetadata: metadata, ...(acceptLanguage ? { acceptLanguage } : {}) };
    channel.inject(`${domain}.setUserAgentOverride`, agent, request.sessionId);
  }

  /** A target the emulator is still preparing (its identity): done when it may run. */
  private readonly preparing = new Map<string, Promise<void>>();

  /** Hold clients' resumes of `targetId` until `work` is done: the target runs only as the session's. */
  prepare(targetId: string, work: Promise<void>): void {
    this.preparing.set(targetId, work);
    void work.finally(() => {
      if (this.preparing.get(targetId) === work) this.preparing.delete(targetId);
    });
  }

  /**
   * A client resuming a target the emulator has not finished (or not yet heard of: both are told
   * of a new target at once) waits for it, a second at most for one never heard of.
   */
  private holdResume(channel: CdpChannel, request: ClientRequest): boolean {
    const targetId = request.targetId;
    if (request.method !== 'Runtime.runIfWaitingForDebugger' || targetId === undefined) return false;
    const known = this.targets.typeOf(targetId) !== undefined;
    const work = this.preparing.get(targetId);
    if (known && !work) return false;
    void (async () => {
      const deadline = Date.now() + 1000;
      while (!this.targets.typeOf(targetId) && !this.preparing.has(targetId) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 5));
      }
      await this.preparing.get(targetId)?.catch(() => {});
      channel.release(request);
    })();
    return true;
  }

  private intercept(channel: CdpChannel, request: ClientRequest): boolean {
    this.identify(channel, request);
    if (this.holdResume(channel, request)) return true;
    if (request.method === 'Browser.setDownloadBehavior' || request.method === 'Page.setDownloadBehavior') {
      this.downloads.rewrite(request.params);
      return false;
    }
    if (request.method === 'DOM.setFileInputFiles') return this.refusePaths(channel, request);
    if (request.method === 'Emulation.setUserAgentOverride' && !request.params.userAgent && this.identity) {
      // "No user agent of mine" (Playwright sends it for every page): the session's identity
      // stays whole, not Chromium's own platform beside the session's user agent.
      const { userAgent, platform, metadata, acceptLanguage } = this.identity;
      const language = request.params.acceptLanguage ?? acceptLanguage;
      request.params = {
        userAgent,
        platform,
        userAgentMetadata: metadata,
        ...(language ? { acceptLanguage: language } : {}),
      };
      return false;
    }
    // WebMCP goes on to a Chromium that has the domain: it answers it.
    if (!isServiceCommand(request.method) || (request.method.startsWith('WebMCP.') && this.webmcp.native)) return false;
    void this.answer(channel, request, request.method);
    return true;
  }

  /**
   * The browser is remote (docs/decisions.md D26): it reads no path of the client's machine. A
   * path outside the session's own folders is refused with how to send the contents instead.
   */
  private refusePaths(channel: CdpChannel, request: ClientRequest): boolean {
    const files = Array.isArray(request.params.files) ? request.params.files.map(String) : [];
    const own = `${this.downloads.dir}${sep}`;
    const outside = files.find((f) => !resolve(f).startsWith(own));
    if (outside === undefined) return false;
    const message =
      `the browser is remote and cannot read ${outside} on your machine: send the file's contents instead ` +
      "(cloud-browser's connectors do it for Puppeteer's uploadFile and DOM.setFileInputFiles, Playwright's setInputFiles does it over CDP)";
    channel.answer(request, { error: { code: FAILED, message } });
    return true;
  }

  private async answer(channel: CdpChannel, request: ClientRequest, method: ServiceCommand): Promise<void> {
    const problem = paramsProblem(method, request.params);
    if (problem) {
      channel.answer(request, {
        error: { code: INVALID_PARAMS, message: `Invalid parameters: ${problem}`, data: problem },
      });
      return;
    }
    try {
      const result =
        method === 'WebMCP.enable' || method === 'WebMCP.disable'
          ? this.switchWebMcp(channel, request, this.pageFor(method, request.targetId))
          : await this.run(method, request.params as never, request.targetId);
      channel.answer(request, { result });
    } catch (error) {
      const invalid = error instanceof BadParams;
      const message = invalid ? `Invalid parameters: ${(error as Error).message}` : (error as Error).message;
      channel.answer(request, { error: { code: invalid ? INVALID_PARAMS : FAILED, message } });
    }
  }

  private async run<M extends ServiceCommand>(
    method: M,
    params: ServiceParams<M>,
    targetId: string | undefined,
  ): Promise<Result> {
    if (method.startsWith('ScrapiumBrowser.')) return this.downloadsCommand(method, params);
    const page = this.pageFor(method, targetId);
    if (method === 'WebMCP.invokeTool') return this.webmcp.invoke(page, params as ServiceParams<'WebMCP.invokeTool'>);
    if (method === 'WebMCP.cancelInvocation') {
      await this.webmcp.cancel(page, (params as ServiceParams<'WebMCP.cancelInvocation'>).invocationId);
      return {};
    }
    if (method === 'Page.getRenderedContent')
      return this.rendered.read(page, params as ServiceParams<'Page.getRenderedContent'>);
    switch (method) {
      case 'Antibot.captchaEnable':
        this.captchas.enable(this.targets.pages());
        return {};
      case 'Antibot.captchaDisable':
        this.captchas.enabled = false;
        return {};
      case 'Antibot.getSolvedCaptchas':
        return { records: this.captchas.records() };
      case 'Antibot.solveCaptcha':
        return this.solve(page, params as ServiceParams<'Antibot.solveCaptcha'>);
      default:
        return this.antibot(page).run(method, params);
    }
  }

  /** The page a command sent on `targetId` acts on. */
  private pageFor(method: string, targetId: string | undefined): string {
    const page = targetId === undefined ? undefined : this.targets.pageOfTarget(targetId);
    if (!page) {
      throw new Error(
        `${method} acts on a page: send it on the page's session (Playwright: context.newCDPSession(page); Puppeteer: page.createCDPSession())`,
      );
    }
    return page;
  }

  private async solve(page: string, params: ServiceParams<'Antibot.solveCaptcha'>): Promise<Result> {
    const d = await this.captchas.solveOn(page, params.detectionId, params.timeout ?? 120);
    if (d.record.status === 'failed') throw new Error(d.record.errorMessage ?? 'the captcha was not solved');
    const { detectionId, type, method } = d.record;
    return { detectionId, type, method, ...(d.token ? { token: d.token } : {}) };
  }

  private async downloadsCommand(method: string, params: Record<string, unknown>): Promise<Result> {
    switch (method) {
      case 'ScrapiumBrowser.hasDownloads':
        return { result: Object.keys(await this.downloads.metadata()).length > 0 };
      case 'ScrapiumBrowser.getDownloadsMetadatas':
        return { metadata: await this.downloads.metadata() };
      case 'ScrapiumBrowser.getDownload': {
        const filename = params.filename as string;
        const data = await this.downloads.read(filename);
        if (data !== undefined) return { data };
        const refused = this.downloads.refused.get(filename);
        throw new Error(
          refused
            ? `${filename} was not kept: ${refused}`
            : `no download named ${JSON.stringify(filename)} in this session`,
        );
      }
      default:
        return { files: await this.downloads.readAll(params.delete === true) };
    }
  }
}
