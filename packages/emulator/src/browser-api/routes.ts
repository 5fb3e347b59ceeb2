/**
 * The cloud browser's REST side of the emulator (docs/decisions.md D20 to docs/decisions.md D24), on the browser URL's host, the key
 * as `?key=`: sessions and stop, credential vaults, extensions, unblock.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ParsedBrowserUrl } from 'cloud-browser';
import { isRefusal, type Refusal, readBody, readJson, refusal, sendFileRange } from '../http.js';
import type { RecordingStore } from '../recording/store.js';
import type { KeyedRequest } from '../router.js';
import type { EmulatedSession } from '../session.js';
import type { ExtensionStore } from './extensions.js';
import type { VaultStore } from './vaults.js';

/** What the routes need of the emulator's sessions. */
export interface SessionHost {
  /** The running sessions opened with `key`. */
  list(key: string): EmulatedSession[];
  /** A running session of `key` by run id or name. */
  find(key: string, idOrName: string): EmulatedSession | undefined;
  /** Open a session as a connection with these options would, kept for a client to join. */
  open(options: ParsedBrowserUrl): Promise<EmulatedSession | Refusal>;
  /** The emulator's `ws://` address. */
  browserUrl(): string;
}

/** Options of {@link BrowserRestApi}. */
export interface BrowserRestApiOptions {
  sessions: SessionHost;
  vaults: VaultStore;
  extensions: ExtensionStore;
  recordings: RecordingStore;
}

/** The REST routes of the browser side. */
export class BrowserRestApi {
  constructor(private readonly options: BrowserRestApiOptions) {}

  /** The paths of the browser's REST side (mounted on the emulator's router). */
  static readonly PREFIXES = ['/sessions', '/session/', '/vault', '/extension', '/unblock', '/run/'] as const;

  /** Answer a request of the browser's REST side whose key was checked. */
  async route({ req, res, url, key }: KeyedRequest): Promise<Refusal | [number, unknown] | undefined> {
    const method = req.method ?? 'GET';
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const ok = (value: Refusal | object, status = 200): Refusal | [number, unknown] =>
      isRefusal(value) ? value : [status, value];
    const { vaults, extensions, sessions } = this.options;
    const vaultKey = req.headers['x-vault-key'] as string | undefined;
    const route = `${method} /${parts[0]}${parts.length > 1 ? '/:id' : ''}${parts
      .slice(2)
      .map((p) => `/${['item', 'rotate', 'stop', 'playback', 'video'].includes(p) ? p : ':id'}`)
      .join('')}`;
    switch (route) {
      case 'GET /sessions': {
        const list = sessions.list(key).map((s) => s.record());
        return [200, { sessions: list, total: list.length }];
      }
      case 'POST /session/:id/stop': {
        req.resume();
        const session = sessions.find(key, parts[1] as string);
        if (!session) return refusal(404, 'ERR::BROWSER::SESSION_NOT_FOUND', `no running session ${parts[1]}`);
        await session.end({ code: 1000, reason: 'ERR::BROWSER::SESSION_STOPPED: stopped through the API' });
        return [200, { success: true, run_id: session.runId, message: 'session stopped' }];
      }
      case 'POST /vault':
        return this.withJson(req, (body) => ok(vaults.create(key, body), 201));
      case 'GET /vault':
        return [200, vaults.list(key)];
      case 'GET /vault/:id':
        return ok(vaults.get(key, parts[1] as string));
      case 'PATCH /vault/:id':
        return this.withJson(req, (body) => ok(vaults.update(key, parts[1] as string, body)));
      case 'DELETE /vault/:id':
        return ok(vaults.delete(key, parts[1] as string));
      case 'POST /vault/:id/rotate':
        req.resume();
        return ok(vaults.rotate(key, parts[1] as string, vaultKey));
      case 'GET /vault/:id/item':
        return ok(vaults.listItems(key, parts[1] as string));
      case 'POST /vault/:id/item':
        return this.withJson(req, (body) => ok(vaults.createItem(key, parts[1] as string, vaultKey, body), 201));
      case 'PATCH /vault/:id/item/:id':
        return this.withJson(req, (body) =>
          ok(vaults.updateItem(key, parts[1] as string, parts[3] as string, vaultKey, body)),
        );
      case 'DELETE /vault/:id/item/:id':
        return ok(vaults.deleteItem(key, parts[1] as string, parts[3] as string));
      case 'POST /extension':
        return this.uploadExtension(req, key);
      case 'GET /extension':
        return [200, extensions.list(key)];
      case 'GET /extension/:id':
        return ok(extensions.get(key, parts[1] as string));
      case 'DELETE /extension/:id':
        return ok(await extensions.delete(key, parts[1] as string));
      case 'GET /run/:id/playback': {
        const origin = `http://${req.headers.host ?? 'localhost'}`;
        const runId = parts[1] as string;
        const playback = this.options.recordings.playback(
          key,
          runId,
          `${origin}/run/${encodeURIComponent(runId)}/video`,
        );
        return playback ? [200, playback] : refusal(404, 'ERR::BROWSER::RUN_NOT_FOUND', `no run ${runId}`);
      }
      case 'GET /run/:id/video':
        return this.video(req, res, key, parts[1] as string);
      case 'POST /unblock':
        return this.withJson(req, (body) => this.unblock(key, body));
      default:
        req.resume();
        void res;
        return refusal(404, 'ERR::NOT_FOUND', `no route for ${method} ${url.pathname}`);
    }
  }

  /** The WebM of a finished debug run, whole or the one byte range a `<video>` asks for. */
  private async video(
    req: IncomingMessage,
    res: ServerResponse,
    key: string,
    runId: string,
  ): Promise<Refusal | undefined> {
    const video = await this.options.recordings.video(key, runId);
    if (!video) {
      const playback = this.options.recordings.playback(key, runId, '');
      if (!playback) return refusal(404, 'ERR::BROWSER::RUN_NOT_FOUND', `no run ${runId}`);
      return refusal(404, 'ERR::BROWSER::RECORDING_NOT_READY', `the recording of ${runId} is ${playback.status}`, {
        is_retryable: playback.status === 'uploading',
      });
    }
    await sendFileRange(req, res, { path: video.file, size: video.size, type: 'video/webm', name: `${runId}.webm` });
    return undefined;
  }

  private async withJson<T>(
    req: IncomingMessage,
    then: (body: Record<string, unknown>) => T | Promise<T>,
  ): Promise<T | Refusal> {
    const body = await readJson(req);
    return isRefusal(body) ? body : then(body);
  }

  private async uploadExtension(req: IncomingMessage, key: string): Promise<Refusal | [number, unknown]> {
    // The boundary is case-sensitive: only the media type is compared in lower case.
    const type = req.headers['content-type'] ?? '';
    const media = type.toLowerCase();
    if (media.startsWith('application/json')) {
      const body = await readJson(req);
      if (isRefusal(body)) return body;
      const answer = await this.options.extensions.fromUrl(key, body.extension_url);
      return isRefusal(answer) ? answer : [201, answer];
    }
    if (!media.startsWith('multipart/form-data'))
      return refusal(
        400,
        'ERR::BROWSER::INVALID_EXTENSION',
        'send a multipart form with a `file` part, or JSON {extension_url}',
      );
    const raw = await readBody(req, 64 << 20);
    if (!Buffer.isBuffer(raw)) return raw;
    let form: FormData;
    try {
      form = await new Response(new Uint8Array(raw), { headers: { 'content-type': type } }).formData();
    } catch {
      return refusal(400, 'ERR::BROWSER::INVALID_EXTENSION', 'the multipart form could not be read');
    }
    const file = form.get('file');
    if (!(file instanceof Blob))
      return refusal(400, 'ERR::BROWSER::INVALID_EXTENSION', 'the form needs one `file` part: a .zip or .crx');
    const name = (file as File).name ?? 'extension.zip';
    const answer = await this.options.extensions.add(key, Buffer.from(await file.arrayBuffer()), name, 'upload');
    return isRefusal(answer) ? answer : [201, answer];
  }

  /** Open a session already at `url` (docs/decisions.md D24), kept for the client that joins by `ws_url`. */
  private async unblock(key: string, body: Record<string, unknown>): Promise<Refusal | [number, unknown]> {
    const target = body.url;
    if (typeof target !== 'string' || !URL.canParse(target) || !/^https?:$/.test(new URL(target).protocol))
      return refusal(400, 'ERR::BROWSER::INVALID_REQUEST', '`url` must be an http(s) URL');
    // Like its crawls, the emulator never leaves the machine.
    if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(new URL(target).hostname))
      return refusal(
        400,
        'ERR::BROWSER::INVALID_REQUEST',
        'the emulator unblocks sites on this machine only (127.0.0.1, localhost)',
      );
    const timeout = body.browser_timeout ?? body.timeout;
    if (
      timeout !== undefined &&
      (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > 1800)
    )
      return refusal(400, 'ERR::BROWSER::INVALID_REQUEST', '`browser_timeout` must be whole seconds from 1 to 1800');
    const name =
      typeof body.session === 'string' && body.session ? body.session : `unblock${randomBytes(6).toString('hex')}`;
    const options = {
      browser_url: this.options.sessions.browserUrl(),
      api_key: key,
      session: name,
      auto_close: false,
      target_url: target,
      ...(typeof timeout === 'number' ? { timeout } : {}),
      ...(body.debug === true ? { debug: true } : {}),
      ...(body.enable_mcp === true ? { enable_mcp: true } : {}),
      ...(typeof body.os === 'string' ? { os: body.os as ParsedBrowserUrl['os'] } : {}),
      ...(typeof body.country === 'string' ? { country: body.country } : {}),
    } as ParsedBrowserUrl;
    const session = await this.options.sessions.open(options);
    if (isRefusal(session)) return session;
    const ws = new URL(this.options.sessions.browserUrl());
    ws.searchParams.set('api_key', key);
    ws.searchParams.set('session', name);
    ws.searchParams.set('auto_close', 'false');
    return [
      200,
      {
        ws_url: ws.href,
        session_id: name,
        run_id: session.runId,
        ...(body.enable_mcp === true ? { mcp_endpoint: session.mcpEndpoint ?? null } : {}),
      },
    ];
  }
}
