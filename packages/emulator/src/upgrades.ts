/**
 * The emulator's WebSocket upgrades: a browser session at `/` (refused as the service refuses,
 * docs/decisions.md D6), a session's VNC view at `/run/{id}/vnc`, and the dashboard's live views.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { isConfigError, type ParsedBrowserUrl, parseBrowserUrl, projectSalt } from 'cloud-browser';
import { RETRYABLE_BROWSER_CODES } from 'cloud-browser/internal';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Dashboard } from './dashboard/routes.js';
import { errorBody, isRefusal, refuseUpgrade } from './http.js';
import { EMULATOR_MCP_ENDPOINT_HEADER, INTERNAL_HEADER, type McpEndpoints } from './mcp.js';
import type { SessionRegistry } from './sessions.js';

/** The emulator's own upgrade header: the native VNC port that serves the session (the service's is 5901). */
export const EMULATOR_VNC_PORT_HEADER = 'X-Emulator-Vnc-Port';

/** A refusal the next connection gets (docs/decisions.md D6). */
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
  /** Sent as `is_retryable`; by default the code decides (docs/decisions.md D6). */
  retryable?: boolean;
}

/** What the upgrades need of the rest of the emulator. */
export interface UpgradeOptions {
  host: string;
  apiKeys: ReadonlySet<string>;
  sessions: SessionRegistry;
  dashboard: Dashboard;
  mcp: McpEndpoints;
  /** The native VNC port, told to VNC sessions in {@link EMULATOR_VNC_PORT_HEADER}. */
  vncPort(): number;
}

/** Routes each upgrade; {@link Upgrades.close} ends every WebSocket it accepted. */
export class Upgrades {
  readonly #faults: RefusalFault[] = [];
  readonly #wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 256 * 1024 * 1024,
    skipUTF8Validation: true,
  });

  constructor(private readonly options: UpgradeOptions) {}

  /** Refuse the next browser connection this way. */
  refuseNext(fault: RefusalFault): void {
    this.#faults.push(fault);
  }

  /** Answer one upgrade request; never throws (a failure destroys the socket). */
  handle(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const accept = (headers: string[], then: (ws: WebSocket) => void) => this.#accept(req, socket, head, headers, then);
    void (async () => {
      const url = new URL(req.url ?? '/', `ws://${req.headers.host ?? this.options.host}`);
      if (this.options.dashboard.upgrade(req, socket, (then) => accept([], then))) return;
      const view = /^\/run\/([^/]+)\/vnc$/.exec(url.pathname);
      if (view) return this.#vncView(decodeURIComponent(view[1] as string), req, socket, accept);
      const devtools = /^\/run\/([^/]+)\/devtools$/.exec(url.pathname);
      if (devtools && this.options.mcp.internal(req.headers[INTERNAL_HEADER])) {
        const session = this.options.sessions.byRunId(decodeURIComponent(devtools[1] as string));
        if (!session)
          return refuseUpgrade(socket, 404, errorBody(404, 'ERR::BROWSER::SESSION_NOT_FOUND', 'no such run'));
        return accept([], (ws) => session.attach(ws, false));
      }
      if (url.pathname !== '/') {
        return refuseUpgrade(
          socket,
          404,
          errorBody(404, 'ERR::BROWSER::NOT_FOUND', `no browser endpoint at ${url.pathname}`),
        );
      }
      const fault = this.#faults.shift();
      if (fault) return refuseAsAsked(fault, socket, accept);
      await this.#browser(url, socket, accept);
    })().catch(() => socket.destroy());
  }

  /** End every WebSocket accepted (called last, once the sessions have said goodbye). */
  close(): void {
    for (const client of this.#wss.clients) client.terminate();
    this.#wss.close();
  }

  #vncView(runId: string, req: IncomingMessage, socket: Socket, accept: Accept): void {
    const session = this.options.sessions.byRunId(runId);
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
    } else accept([], (ws) => session.attachVnc(ws, req.socket.remoteAddress ?? ''));
  }

  /** A browser session: the options checked, the key known, the session opened or rejoined. */
  async #browser(url: URL, socket: Socket, accept: Accept): Promise<void> {
    let options: ParsedBrowserUrl;
    try {
      // Parameters newer than this emulator are accepted and listed as ignored (docs/decisions.md D19).
      options = parseBrowserUrl(url, { unknown: 'keep' });
    } catch (error) {
      const message = isConfigError(error) ? error.issues.map((i) => i.message).join('; ') : 'invalid query';
      return refuseUpgrade(socket, 400, errorBody(400, 'ERR::BROWSER::INVALID_OPTIONS', message));
    }
    if (!options.api_key || !this.options.apiKeys.has(options.api_key)) {
      const why = options.api_key ? 'the API key is not valid' : 'the API key is missing: pass api_key';
      return refuseUpgrade(socket, 401, errorBody(401, 'ERR::BROWSER::UNAUTHORIZED', why));
    }
    const session = await this.options.sessions.open(options);
    if (isRefusal(session)) {
      return refuseUpgrade(
        socket,
        session.status,
        errorBody(session.status, session.code, session.message, session.extra),
      );
    }
    const headers = [`X-Browser-Run-Id: ${session.runId}`];
    if (session.mcpEndpoint) headers.push(`${EMULATOR_MCP_ENDPOINT_HEADER}: ${session.mcpEndpoint}`);
    if (options.enable_vnc) {
      headers.push(
        `X-Browser-Project-Salt: ${projectSalt(options.api_key)}`,
        `${EMULATOR_VNC_PORT_HEADER}: ${this.options.vncPort()}`,
      );
    }
    accept(headers, (ws) => session.attach(ws));
  }

  /** Complete the upgrade with these extra response headers. */
  #accept(req: IncomingMessage, socket: Socket, head: Buffer, extra: string[], then: (ws: WebSocket) => void): void {
    const onHeaders = (h: string[], r: IncomingMessage) => {
      if (r === req) h.push(...extra);
    };
    this.#wss.on('headers', onHeaders);
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      this.#wss.off('headers', onHeaders);
      then(ws);
    });
  }
}

type Accept = (headers: string[], then: (ws: WebSocket) => void) => void;

/** Refuse a connection as a test asked: an HTTP answer, or an upgrade then one frame and a close. */
function refuseAsAsked(fault: RefusalFault, socket: Socket, accept: Accept): void {
  const code = `ERR::BROWSER::${fault.code}`;
  const message = fault.message ?? `emulated refusal ${fault.code}`;
  const retryable = fault.retryable ?? (RETRYABLE_BROWSER_CODES as readonly string[]).includes(fault.code);
  if ((fault.mode ?? 'http') === 'http') {
    const status = fault.status ?? 503;
    refuseUpgrade(socket, status, errorBody(status, code, message, { is_retryable: retryable, resource: 'SESSION' }));
    return;
  }
  accept([], (ws) => {
    const closeCode = fault.closeCode ?? 1013;
    const status = closeCode === 1008 ? 400 : 503;
    ws.send(JSON.stringify(errorBody(status, code, message, { is_retryable: retryable, resource: 'SESSION' })));
    ws.close(closeCode, `${code}: ${message}`.slice(0, 120));
  });
}
