/**
 * Typed access to the service browser's own domains over a page's CDP session (docs/wire.md §10):
 * every command of `SERVICE_COMMANDS` with its parameters checked before it is sent, every
 * event of `SERVICE_EVENTS` typed, and the downloads and rendered content read back as a user
 * wants them. The Playwright and Puppeteer entries open the CDP session; this is the rest.
 */
import { CaptchaError, ConfigError, ProtocolError, TimeoutError } from '../errors.js';
import { checkNumber } from '../internal/knobs.js';
import {
  type CaptchaRecord,
  paramsProblem,
  SERVICE_COMMANDS,
  type ServiceCommand,
  type ServiceEvent,
  type ServiceEventParams,
  type ServiceParams,
  type ServiceResult,
} from './domains.js';

/** A CDP session as Playwright's `CDPSession` and Puppeteer's both are. */
export interface CdpSessionLike {
  send(method: never, params?: never): Promise<unknown>;
  on(event: never, listener: never): unknown;
  off(event: never, listener: never): unknown;
  detach(): Promise<void>;
}

/** The arguments of a command: its parameters, optional when all of them are. */
type ParamsArg<M extends ServiceCommand> =
  Record<string, never> extends ServiceParams<M> ? [params?: ServiceParams<M>] : [params: ServiceParams<M>];

/** `service.antibot.clickOn(…)`: each `Antibot` command by its own name. */
export type AntibotCommands = {
  [M in ServiceCommand as M extends `Antibot.${infer N}` ? N : never]: (
    ...params: ParamsArg<M>
  ) => Promise<ServiceResult<M>>;
};

/** The session's downloads, read back from the remote browser (100 MB a file at most). */
export interface ServiceDownloads {
  /** Whether the browser has finished downloading any file. */
  has(): Promise<boolean>;
  /** Each finished file's name and size in bytes. */
  list(): Promise<Record<string, number>>;
  /** One file's bytes. */
  get(filename: string): Promise<Buffer>;
  /** Every file's bytes; with `delete: true` they are removed from the remote disk. */
  getAll(options?: { delete?: boolean }): Promise<Map<string, Buffer>>;
}

type Loose = {
  send(method: string, params?: object): Promise<unknown>;
  on(e: string, l: (p: unknown) => void): unknown;
  off(e: string, l: (p: unknown) => void): unknown;
};

/** The service's own protocol on one page. */
export class ServiceProtocol {
  readonly antibot: AntibotCommands;
  readonly downloads: ServiceDownloads;
  readonly #cdp: Loose;

  constructor(private readonly session: CdpSessionLike) {
    this.#cdp = session as unknown as Loose;
    const antibot: Record<string, (p?: object) => Promise<unknown>> = {};
    for (const method of Object.keys(SERVICE_COMMANDS) as ServiceCommand[]) {
      if (method.startsWith('Antibot.')) antibot[method.slice(8)] = (p) => this.send(method, p as never);
    }
    this.antibot = antibot as unknown as AntibotCommands;
    this.downloads = {
      has: async () => (await this.send('ScrapiumBrowser.hasDownloads')).result,
      list: async () => (await this.send('ScrapiumBrowser.getDownloadsMetadatas')).metadata,
      get: async (filename) =>
        Buffer.from((await this.send('ScrapiumBrowser.getDownload', { filename })).data, 'base64'),
      getAll: async (options = {}) => {
        const { files } = await this.send('ScrapiumBrowser.getDownloads', options);
        return new Map(Object.entries(files).map(([name, data]) => [name, Buffer.from(data, 'base64')]));
      },
    };
  }

  /**
   * Send one command of the service's domains; its parameters are checked first.
   *
   * @example
   * await service.send('Antibot.fill', { selector: { type: 'css', query: '#q' }, text: 'hello', wpm: 90 })
   */
  async send<M extends ServiceCommand>(method: M, ...[params]: ParamsArg<M>): Promise<ServiceResult<M>> {
    const problem = paramsProblem(method, params ?? {});
    if (problem) {
      const option = problem.slice(0, problem.indexOf(':'));
      throw new ConfigError(`parameters of ${method}`, [{ option, message: problem }]);
    }
    try {
      return (await this.#cdp.send(method, params ?? {})) as ServiceResult<M>;
    } catch (error) {
      throw asProtocolError(method, error);
    }
  }

  /**
   * Listen to an event of the service's domains; returns a way to stop.
   *
   * @example
   * const stop = service.on('Antibot.captchaSolved', (e) => console.log(e.type, e.method));
   */
  on<E extends ServiceEvent>(event: E, listener: (params: ServiceEventParams<E>) => void): () => void {
    const l = listener as (p: unknown) => void;
    this.#cdp.on(event, l);
    return () => void this.#cdp.off(event, l);
  }

  /** The page as rendered: HTML with its iframes inlined, or Markdown; a PDF or an image as base64 (`type: 'binary'`). */
  renderedContent(
    params: ServiceParams<'Page.getRenderedContent'> = {},
  ): Promise<ServiceResult<'Page.getRenderedContent'>> {
    return this.send('Page.getRenderedContent', params);
  }

  /**
   * Wait for the page's next captcha to be settled (or the one `detectionId` names): resolves
   * with its record once solved, rejects with a {@link CaptchaError} carrying the browser's
   * reason, or a {@link TimeoutError}.
   */
  waitForCaptcha(options: { timeout?: number; detectionId?: string } = {}): Promise<CaptchaRecord> {
    const timeout = options.timeout ?? 120_000;
    const issue = checkNumber('timeout', timeout, { min: 1, max: 3_600_000, unit: 'milliseconds' });
    if (issue) return Promise.reject(new ConfigError('waitForCaptcha options', [issue]));
    return new Promise<CaptchaRecord>((resolve, reject) => {
      const stops: (() => void)[] = [];
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        for (const stop of stops) stop();
        settle();
      };
      const ours = (id: string) => options.detectionId === undefined || id === options.detectionId;
      const timer = setTimeout(
        () => finish(() => reject(new TimeoutError(`no captcha was solved within ${timeout} ms`))),
        timeout,
      );
      stops.push(
        this.on('Antibot.captchaSolved', (e) => {
          if (!ours(e.detectionId)) return;
          void this.send('Antibot.getSolvedCaptchas').then(
            ({ records }) => {
              const record = records.find((r) => r.detectionId === e.detectionId);
              finish(() =>
                record
                  ? resolve(record)
                  : reject(new ProtocolError('Antibot.getSolvedCaptchas', `no record of ${e.detectionId}`)),
              );
            },
            (error: unknown) => finish(() => reject(error)),
          );
        }),
        this.on('Antibot.captchaError', (e) => {
          if (ours(e.detectionId)) finish(() => reject(new CaptchaError(e)));
        }),
      );
    });
  }

  /** Let go of the CDP session. */
  detach(): Promise<void> {
    return this.session.detach();
  }
}

/** A library's protocol error as ours: the browser's message, its code when the library kept it. */
function asProtocolError(method: string, error: unknown): ProtocolError {
  const raw = error instanceof Error ? error.message : String(error);
  // Playwright: "cdpSession.send: Protocol error (M): text"; Puppeteer: "Protocol error (M): text".
  const text = raw.replace(/^.*?Protocol error \([^)]*\):\s*/s, '').trim();
  const code = (error as { code?: unknown }).code;
  return new ProtocolError(method, text || raw, {
    cause: error,
    code: typeof code === 'number' ? code : /wasn't found/.test(text) ? -32601 : undefined,
  });
}

/**
 * Wait for the page's next captcha on a CDP session of its own, detached afterwards.
 * The entries' `waitForCaptcha(page)` open the session.
 */
export async function waitOn(
  open: Promise<ServiceProtocol>,
  options: { timeout?: number; detectionId?: string },
): Promise<CaptchaRecord> {
  const service = await open;
  try {
    return await service.waitForCaptcha(options);
  } finally {
    await service.detach().catch(() => {});
  }
}
