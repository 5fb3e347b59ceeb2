/** Receivers built on {@link verifyDelivery}: fetch-style, node:http / Express, and a ready server. */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { isWebhookError, WebhookError } from '../errors.js';
import type { ResourceType } from './constants.js';
import { type PreparedVerifyOptions, prepareVerify, type VerifyOptions, verifyPrepared } from './verify.js';

/** What the application receives for each verified delivery. */
export interface Delivery {
  resourceType: ResourceType;
  /** The decoded body. */
  body: Buffer;
  /** The body parsed as JSON. */
  json<T = unknown>(): T;
}

/** Options of the receivers. */
export interface ReceiverOptions extends Omit<VerifyOptions, 'headers' | 'body'> {
  /** Called once per verified delivery; a throw or rejection answers 500. */
  onDelivery(delivery: Delivery): void | Promise<void>;
  /** Called for each refused delivery, with its status (for logs; never holds a secret). */
  onRefused?: ((error: WebhookError) => void) | undefined;
}

function delivery(resourceType: ResourceType, body: Buffer): Delivery {
  return { resourceType, body, json: <T>() => JSON.parse(body.toString('utf8')) as T };
}

/** Verify, then hand over: the status to answer. */
async function receive(
  options: ReceiverOptions,
  prepared: PreparedVerifyOptions,
  headers: VerifyOptions['headers'],
  body: VerifyOptions['body'],
): Promise<WebhookError | undefined> {
  let verified: Awaited<ReturnType<typeof verifyPrepared>>;
  try {
    verified = await verifyPrepared(prepared, headers, body);
  } catch (error) {
    if (!isWebhookError(error)) throw error;
    options.onRefused?.(error);
    return error;
  }
  if (verified.ping) return undefined;
  try {
    await options.onDelivery(delivery(verified.resourceType, verified.body));
  } catch (error) {
    const failure = new WebhookError(500, 'the application failed to handle the delivery', { cause: error });
    options.onRefused?.(failure);
    return failure;
  }
  return undefined;
}

/**
 * A `(Request) => Promise<Response>` receiver for Hono, Next.js route handlers and other
 * fetch-style frameworks on Node (streaming, node:crypto and zlib). 200 with an empty body on
 * success; 400, 401, 413 or 500 otherwise. On an edge runtime without Node's built-ins, use
 * `cloud-browser/webhooks/web`.
 *
 * @example
 * app.post('/webhook', (c) => handler(c.req.raw)) // Hono
 */
export function createWebhookHandler(options: ReceiverOptions): (request: Request) => Promise<Response> {
  const prepared = prepareVerify(options);
  return async (request) => {
    const refusal = await receive(options, prepared, request.headers, request.body);
    if (!refusal) return new Response(null, { status: 200 });
    return new Response(refusal.message, {
      status: refusal.status,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
  };
}

function answer(req: IncomingMessage, res: ServerResponse, refusal: WebhookError | undefined): void {
  if (!refusal) {
    res.writeHead(200, { 'content-length': '0' }).end();
    return;
  }
  // A refusal may come before the body was read (unsigned, too large): close the connection
  // rather than read the rest of a body nobody wants.
  const unread = !req.readableEnded;
  const text = refusal.message;
  res.writeHead(refusal.status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...(unread ? { connection: 'close' } : {}),
  });
  res.end(text, () => {
    if (unread) req.socket.destroySoon?.();
  });
}

/**
 * A `(req, res)` receiver for `node:http` and Express. Mount it before any body parser: it
 * reads the raw body itself.
 *
 * @example
 * app.post('/webhook', createNodeWebhookListener({ secrets, onDelivery })) // Express, before express.json()
 */
export function createNodeWebhookListener(
  options: ReceiverOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const prepared = prepareVerify(options);
  return async (req, res) => {
    try {
      answer(req, res, await receive(options, prepared, req.headers, req));
    } catch (error) {
      answer(req, res, new WebhookError(500, 'the receiver failed', { cause: error }));
    }
  };
}

/** Options of {@link serveWebhooks}. */
export interface ServeOptions extends ReceiverOptions {
  /** 0 picks a free port. @default 0 */
  port?: number | undefined;
  /** @default '127.0.0.1' */
  host?: string | undefined;
  /** @default '/webhook' */
  path?: string | undefined;
}

/** A running reference receiver. */
export interface WebhookServer {
  /** The full address of the receiving path. */
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

/**
 * The reference receiver (docs/wire.md §4): POST `path` verifies and hands over; other methods
 * on `path` answer 405, other paths 404.
 *
 * @example
 * const receiver = await serveWebhooks({ port: 8080, secrets: process.env.SIGNING_SECRET, onDelivery: (d) => console.log(d.json()) })
 */
export async function serveWebhooks(options: ServeOptions): Promise<WebhookServer> {
  const path = options.path ?? '/webhook';
  const listener = createNodeWebhookListener(options);
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    if ((query < 0 ? url : url.slice(0, query)) !== path) {
      res.writeHead(404, { 'content-length': '0', connection: 'close' }).end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-length': '0', connection: 'close' }).end();
      return;
    }
    void listener(req, res);
  });
  server.keepAliveTimeout = 65_000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}${path}`,
    server,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
