/**
 * The emulator's dashboard: a page at `/` of the browser URL's host showing live sessions (with
 * thumbnails and a live view you can click and type into), recordings of finished debug runs,
 * crawls and webhook deliveries. Behind the emulator's key, given once as `?key=` and then held
 * as a random session cookie, so the key leaves the address bar and is kept nowhere but here.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import type { EmulatedCrawl } from '../crawler/crawl.js';
import type { DeliveryRecord } from '../crawler/deliveries.js';
import { errorBody, refuseUpgrade, sendFileRange, sendJson } from '../http.js';
import type { RecordingStore } from '../recording/store.js';
import type { EmulatedSession } from '../session.js';
import { serveVncWebSocket } from '../vnc/index.js';
import { DASHBOARD_PAGE, SIGN_IN_PAGE } from './page.js';

const COOKIE = 'cloud_browser_dashboard';
const PREFIX = '/emulator/dashboard/';

/** What the dashboard shows, as the emulator holds it. */
export interface DashboardSources {
  apiKeys: ReadonlySet<string>;
  sessions(): Iterable<EmulatedSession>;
  crawls(): Iterable<EmulatedCrawl>;
  deliveries(): readonly DeliveryRecord[];
  recordings: RecordingStore;
  now(): number;
}

export class Dashboard {
  /** Session cookie values and the key each stands for. */
  private readonly tokens = new Map<string, string>();

  constructor(private readonly sources: DashboardSources) {}

  /** The key of a signed-in request, from its cookie. */
  private keyOf(req: IncomingMessage): string | undefined {
    const cookie = String(req.headers.cookie ?? '')
      .split(/;\s*/)
      .find((c) => c.startsWith(`${COOKIE}=`));
    return cookie ? this.tokens.get(cookie.slice(COOKIE.length + 1)) : undefined;
  }

  /** Handle a dashboard request; false when the path is not the dashboard's. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = new URL(req.url ?? '/', 'http://emulator');
    if (url.pathname !== '/' && !url.pathname.startsWith(PREFIX)) return false;
    if (req.method !== 'GET') return false;
    const given = url.searchParams.get('key');
    if (url.pathname === '/' && given !== null) {
      if (!this.sources.apiKeys.has(given)) {
        html(res, 401, SIGN_IN_PAGE('That is not the emulator’s key.'));
        return true;
      }
      // Trade the key for a cookie, and take it out of the address bar.
      const token = randomBytes(24).toString('base64url');
      this.tokens.set(token, given);
      url.searchParams.delete('key');
      res
        .writeHead(303, {
          location: `/${url.search}`,
          'set-cookie': `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`,
          'cache-control': 'no-store',
        })
        .end();
      return true;
    }
    const key = this.keyOf(req);
    if (!key) {
      if (url.pathname === '/') html(res, 401, SIGN_IN_PAGE());
      else sendJson(res, 401, errorBody(401, 'ERR::AUTH::INVALID_KEY', 'sign in to the dashboard with ?key='));
      return true;
    }
    if (url.pathname === '/') {
      html(res, 200, DASHBOARD_PAGE);
      return true;
    }
    const [what, id = ''] = url.pathname.slice(PREFIX.length).split('/').map(decodeURIComponent);
    void this.route(req, res, key, what ?? '', id).catch(() => res.destroy());
    return true;
  }

  private async route(req: IncomingMessage, res: ServerResponse, key: string, what: string, id: string): Promise<void> {
    if (what === 'state') return sendJson(res, 200, this.state(key));
    if (what === 'thumbnail') {
      const session = this.session(key, id);
      const jpeg = await session?.thumbnail();
      if (!jpeg) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'image/jpeg', 'cache-control': 'no-store' }).end(jpeg);
      return;
    }
    if (what === 'video') {
      const video = await this.sources.recordings.video(key, id);
      if (!video) return void res.writeHead(404).end();
      return sendFileRange(req, res, { path: video.file, size: video.size, type: 'video/webm', name: `${id}.webm` });
    }
    sendJson(res, 404, errorBody(404, 'ERR::NOT_FOUND', `no dashboard route ${what}`));
  }

  private session(key: string, runId: string): EmulatedSession | undefined {
    for (const s of this.sources.sessions()) if (s.runId === runId && s.options.api_key === key) return s;
    return undefined;
  }

  /**
   * The live view's socket (`/emulator/dashboard/view/<run_id>`): the session's picture and
   * input over RFB, let in by the dashboard's cookie. Returns false when the path is not it.
   */
  upgrade(req: IncomingMessage, socket: Socket, accept: (then: (ws: WebSocket) => void) => void): boolean {
    const url = new URL(req.url ?? '/', 'http://emulator');
    if (!url.pathname.startsWith(`${PREFIX}view/`)) return false;
    const key = this.keyOf(req);
    const session = key
      ? this.session(key, decodeURIComponent(url.pathname.slice(`${PREFIX}view/`.length)))
      : undefined;
    if (!session) {
      refuseUpgrade(socket, key ? 404 : 401, errorBody(key ? 404 : 401, 'ERR::NOT_FOUND', 'no such live session'));
      return true;
    }
    accept((ws) => serveVncWebSocket(ws, { none: session.vncTarget }));
    return true;
  }

  /** Everything the page shows for `key`; secrets redacted (the sessions' own redaction). */
  state(key: string) {
    const now = this.sources.now();
    const sessions = [...this.sources.sessions()]
      .filter((s) => s.options.api_key === key)
      .map((s) => {
        const { browser_url: _b, api_key: _k, ...options } = s.info().options;
        return {
          run_id: s.runId,
          session: s.options.session ?? null,
          age_seconds: Math.max(0, Math.round((now - s.startedAt.getTime()) / 1000)),
          options,
        };
      });
    const live = new Set(sessions.map((s) => s.run_id));
    const recordings = this.sources.recordings
      .list(key)
      .filter((r) => r.status !== 'disabled' && !live.has(r.runId))
      .map((r) => ({ run_id: r.runId, status: r.status, metadata: r.metadata }));
    const crawls = [...this.sources.crawls()]
      .filter((c) => c.key === key)
      .map((c) => {
        const record = c.record() as { status: string; state: Record<string, number | null> };
        const s = record.state;
        const done = (s.urls_visited ?? 0) + (s.urls_failed ?? 0) + (s.urls_skipped ?? 0);
        const total = done + (s.urls_to_crawl ?? 0);
        const finished = record.status === 'DONE' || record.status === 'CANCELLED';
        return {
          uuid: c.uuid,
          url: c.config.url ?? null,
          status: record.status,
          progress: finished ? 100 : total ? Math.floor((100 * done) / total) : 0,
          visited: s.urls_visited,
          failed: s.urls_failed,
          skipped: s.urls_skipped,
          pages: [...c.pages.entries()].slice(0, 200).map(([url, p]) => ({ url, status: p.status })),
        };
      });
    const mine = new Set<string>(crawls.map((c) => c.uuid));
    const deliveries = this.sources
      .deliveries()
      .filter((d) => d.crawl === undefined || mine.has(d.crawl))
      .map((d) => ({
        webhook: d.webhook,
        event: d.event,
        crawl: d.crawl ?? null,
        status: d.status,
        attempts: d.attempts,
        verdict: typeof d.status === 'number' && d.status >= 200 && d.status < 300 ? 'accepted' : 'refused',
      }));
    return { sessions, recordings, crawls, deliveries };
  }
}

function html(res: ServerResponse, status: number, body: string): void {
  res
    .writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy':
        "default-src 'self'; img-src 'self' blob:; media-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'",
    })
    .end(body);
}
