/**
 * Each `enable_mcp` session's MCP endpoint (docs/decisions.md D31): streamable HTTP at
 * `/mcp/{run_id}`, behind the session's key (`Authorization: Bearer <key>` or `?key=`), serving
 * `cloud-browser/mcp`'s tools over the session's own browser through Playwright, which joins the
 * session as a client of its own (it does not keep the session open). Gone with the session: 404.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BrowserTools, McpHttpEndpoint } from 'cloud-browser/mcp';
import type { Browser } from 'playwright-core';
import { errorBody, sendJson } from './http.js';
import type { EmulatedSession } from './session.js';
import type { SessionRegistry } from './sessions.js';

/** The emulator's own upgrade header: the session's MCP endpoint, when it was opened with `enable_mcp`. */
export const EMULATOR_MCP_ENDPOINT_HEADER = 'X-Emulator-Mcp-Endpoint';

/** The header that lets the endpoint's own Playwright into a session (a secret of this process). */
export const INTERNAL_HEADER = 'x-emulator-internal';

const PATH = /^\/mcp\/([^/]+)\/?$/;

interface Served {
  browser: Browser;
  endpoint: McpHttpEndpoint;
}

/** The MCP endpoints of an emulator's sessions. */
export class McpEndpoints {
  /** Lets the endpoints' Playwright join a session over the emulator's own WebSocket route. */
  readonly secret = randomBytes(24).toString('hex');
  readonly #served = new Map<string, Promise<Served>>();

  constructor(
    private readonly sessions: SessionRegistry,
    /** The emulator's addresses, known once it listens. */
    private readonly urls: { readonly api: string; readonly browser: string },
  ) {}

  /** A session's endpoint address (no key in it), when it was opened with `enable_mcp`. */
  address(session: EmulatedSession): string | undefined {
    return session.options.enable_mcp ? `${this.urls.api}/mcp/${session.runId}` : undefined;
  }

  /** Whether the internal header a WebSocket upgrade carries is this emulator's. */
  internal(value: string | string[] | undefined): boolean {
    if (typeof value !== 'string' || value.length !== this.secret.length) return false;
    return timingSafeEqual(Buffer.from(value), Buffer.from(this.secret));
  }

  /** Answer a request under `/mcp/`; false when the path is not the endpoint's. */
  handle(req: IncomingMessage, res: ServerResponse, apiKeys: ReadonlySet<string>): boolean {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const match = PATH.exec(url.pathname);
    if (!match) return false;
    const refuse = (status: number, code: string, message: string) => {
      req.resume();
      sendJson(res, status, errorBody(status, code, message));
      return true;
    };
    const key = keyOf(req, url);
    if (!key || !apiKeys.has(key)) {
      return refuse(
        401,
        'ERR::AUTH::INVALID_KEY',
        key
          ? 'the API key is not valid'
          : 'the API key is missing: send it as `Authorization: Bearer <key>` or the `key` query parameter',
      );
    }
    const session = this.sessions.find(key, decodeURIComponent(match[1] as string));
    if (!session?.options.enable_mcp) {
      return refuse(404, 'ERR::BROWSER::SESSION_NOT_FOUND', 'no running session of this key serves MCP here');
    }
    void this.#serve(session)
      .then((served) => served.endpoint.handle(req, res))
      .catch((error: unknown) => {
        if (res.headersSent) return void res.destroy();
        const message = error instanceof Error ? error.message : String(error);
        refuse(503, 'ERR::BROWSER::MCP_UNAVAILABLE', `the session's MCP endpoint could not start: ${message}`);
      });
    return true;
  }

  /** The endpoint of a session, its Playwright connected on first use. */
  #serve(session: EmulatedSession): Promise<Served> {
    let served = this.#served.get(session.runId);
    if (!served) {
      served = this.#start(session);
      this.#served.set(session.runId, served);
      served.catch(() => this.#served.delete(session.runId));
    }
    return served;
  }

  async #start(session: EmulatedSession): Promise<Served> {
    const { chromium } = await import('playwright-core').catch(() => {
      throw new Error('the MCP endpoint drives the session with Playwright: run `npm install playwright-core`');
    });
    const url = new URL(`run/${session.runId}/devtools`, this.urls.browser);
    const browser = await chromium.connectOverCDP(url.href, { headers: { [INTERNAL_HEADER]: this.secret } });
    const key = session.options.api_key as string;
    const secrets = [key, session.options.vnc_password, session.options.vault_key].filter(
      (s): s is string => typeof s === 'string' && s.length > 0,
    );
    const endpoint = new McpHttpEndpoint(() => new BrowserTools(browser, secrets));
    void session.ended.then(async () => {
      this.#served.delete(session.runId);
      await endpoint.close();
      await browser.close().catch(() => {});
    });
    return { browser, endpoint };
  }

  /** End every endpoint (the emulator is stopping). */
  async close(): Promise<void> {
    const all = [...this.#served.values()];
    this.#served.clear();
    await Promise.all(
      all.map(async (p) => {
        const served = await p.catch(() => undefined);
        await served?.endpoint.close();
        await served?.browser.close().catch(() => {});
      }),
    );
  }
}

/** The key of a request: `Authorization: Bearer <key>`, else `?key=`. */
function keyOf(req: IncomingMessage, url: URL): string | undefined {
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  return bearer?.[1] ?? url.searchParams.get('key') ?? undefined;
}
