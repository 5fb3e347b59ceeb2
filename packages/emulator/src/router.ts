/**
 * The emulator's one HTTP router. Each part mounts its paths here: a keyed mount checks
 * `?key=` once for all of them, runs the part's route, and answers what it returns (a refusal
 * as the service's error body, `[status, body]` as JSON, nothing when the route answered itself);
 * an open mount (the dashboard, which signs in with a cookie) answers by itself.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorBody, isRefusal, keyOf, type Refusal, refusal, sendError, sendJson } from './http.js';

/** A request that passed the key check. */
export interface KeyedRequest {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  key: string;
}

/** What a keyed route answers: a refusal, a JSON answer, or nothing when it wrote the answer itself. */
export type Answer = Refusal | readonly [number, unknown] | undefined;

type Mount = (req: IncomingMessage, res: ServerResponse, url: URL) => boolean;

/** Matches `prefix` itself and every path below it. */
const under = (prefix: string, path: string) =>
  path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);

export class Router {
  readonly #mounts: Mount[] = [];

  constructor(private readonly apiKeys: ReadonlySet<string>) {}

  /** Serve the paths under `prefixes` with `route`, for requests that carry an accepted key. */
  keyed(prefixes: readonly string[], route: (request: KeyedRequest) => Promise<Answer>): this {
    this.#mounts.push((req, res, url) => {
      if (!prefixes.some((p) => under(p, url.pathname))) return false;
      const key = keyOf(url, this.apiKeys);
      if (isRefusal(key)) {
        req.resume();
        sendError(res, key);
        return true;
      }
      void route({ req, res, url, key })
        .then((answer) => respond(req, res, answer))
        .catch((e: unknown) => {
          if (res.headersSent) res.destroy();
          else sendError(res, refusal(500, 'ERR::EMULATOR::INTERNAL', e instanceof Error ? e.message : String(e)));
        });
      return true;
    });
    return this;
  }

  /** A mount that checks its own access and answers by itself; false when the path is not its. */
  open(handle: (req: IncomingMessage, res: ServerResponse) => boolean): this {
    this.#mounts.push((req, res) => handle(req, res));
    return this;
  }

  /** Answer a request: the first mount whose paths it is, else the service's 404. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://emulator');
    for (const mount of this.#mounts) if (mount(req, res, url)) return;
    req.resume();
    sendJson(res, 404, errorBody(404, 'ERR::NOT_FOUND', `no route for ${req.method} ${url.pathname}`));
  }
}

function respond(req: IncomingMessage, res: ServerResponse, answer: Answer): void {
  if (answer === undefined) return;
  req.resume();
  if (isRefusal(answer)) sendError(res, answer);
  else sendJson(res, answer[0], answer[1]);
}
