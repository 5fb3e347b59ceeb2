/**
 * The client's WebSocket to the cloud browser: opens it with `ws`, reads the upgrade
 * headers, turns refusals (docs/decisions.md D6) into typed errors and keeps the session alive.
 */
import WebSocket from 'ws';
import { ConnectionError, ServiceError, type ServiceErrorFields, SessionClosedError, TimeoutError } from '../errors.js';
import { redact, redactUrl } from '../internal/redact.js';

/** Browser error codes the caller may retry (docs/decisions.md D6). */
export const RETRYABLE_BROWSER_CODES = [
  'ALLOCATION_FAILED',
  'CDP_CONNECTION_FAILED',
  'WEBSOCKET_UPGRADE_FAILED',
  'TOO_MANY_CONCURRENT_REQUEST',
  'PROXY_UNAVAILABLE',
] as const;

/** Largest CDP frame accepted: full-page screenshots are large. */
export const MAX_FRAME_BYTES = 256 * 1024 * 1024;

/** Close codes that carry a service refusal after the upgrade (docs/decisions.md D6). */
const REFUSAL_CLOSE_CODES = new Set([1008, 1011, 1013]);

/** An id no CDP client reaches: our own `Browser.close` uses it and its answer is not relayed. */
export const RESERVED_CDP_ID = 2_147_480_000;

function browserCode(code: string): string {
  return code.replace(/^ERR::BROWSER::/, '');
}

/** A service error from a browser refusal, retryable when its code is one of docs/decisions.md D6's five. */
export function browserError(fields: ServiceErrorFields, cause?: unknown): ServiceError {
  const retryable = (RETRYABLE_BROWSER_CODES as readonly string[]).includes(browserCode(fields.code));
  return ServiceError.generate(
    { ...fields, is_retryable: fields.is_retryable || retryable },
    { status: fields.http_status_code, cause },
  );
}

function closeStatus(code: number): number {
  if (code === 1013) return 503;
  if (code === 1008) return 400;
  return 500;
}

/** The defaults of the connect options (`ConnectOptions`). */
export const CONNECT_DEFAULTS = { timeout: 30_000, keepAlive: 30, retries: 0 } as const;

/** Options of {@link openCloudSocket}. */
export interface OpenSocketOptions {
  /** Milliseconds for the handshake. @default 30000 */
  timeout?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Seconds between pings; 0 turns them off. @default 30 */
  keepAlive?: number | undefined;
}

/**
 * One open WebSocket to the cloud browser. CDP frames go to `onFrame`; a service error
 * frame is held back and reported with the close that follows it.
 */
export class CloudSocket {
  readonly runId: string | undefined;
  readonly saltHeader: string | undefined;
  /** The emulator's `X-Emulator-Vnc-Port`: the native VNC port when it is not 5901. */
  readonly vncPortHeader: number | undefined;
  /** The emulator's `X-Emulator-Mcp-Endpoint`: the session's MCP endpoint (an http(s) address, no key). */
  readonly mcpEndpointHeader: string | undefined;
  /** Resolves once, when the socket has closed, with why. */
  readonly closed: Promise<SessionClosedError>;
  private onFrame: (data: Buffer, isBinary: boolean) => void = () => {};
  /** Sees each text frame from the browser first; true when it keeps it (docs/decisions.md D26). */
  incoming: ((data: Buffer) => boolean) | undefined;
  /** Sees each text frame from the library first; true when it keeps it. */
  outgoing: ((data: Buffer | string) => boolean) | undefined;
  private serviceError: ServiceErrorFields | undefined;
  private resolveClosed!: (e: SessionClosedError) => void;
  private pingTimer: NodeJS.Timeout | undefined;
  private closeError: SessionClosedError | undefined;

  constructor(
    readonly socket: WebSocket,
    headers: Record<string, string | string[] | undefined>,
    keepAliveSeconds: number,
  ) {
    const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
    this.runId = first(headers['x-browser-run-id']);
    this.saltHeader = first(headers['x-browser-project-salt'])?.toLowerCase();
    const vncPort = Number(first(headers['x-emulator-vnc-port']));
    this.vncPortHeader = Number.isInteger(vncPort) && vncPort > 0 && vncPort < 65536 ? vncPort : undefined;
    const mcp = first(headers['x-emulator-mcp-endpoint']);
    this.mcpEndpointHeader = mcp && /^https?:\/\//.test(mcp) && URL.canParse(mcp) ? mcp : undefined;
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary && this.isServiceFrame(data)) return;
      if (!isBinary && this.incoming?.(data)) return;
      this.onFrame(data, isBinary);
    });
    socket.on('close', (code: number, reason: Buffer) => this.finish(code, reason.toString('utf8')));
    socket.on('error', () => {
      // 'close' follows every 'error'; the reason is reported there.
    });
    if (keepAliveSeconds > 0) this.startKeepAlive(keepAliveSeconds);
  }

  /** Where CDP frames go (text stays text). */
  setFrameHandler(handler: (data: Buffer, isBinary: boolean) => void): void {
    this.onFrame = handler;
  }

  /** Send a frame as it came: text as text, binary as binary. */
  send(data: Buffer | string, isBinary = false): void {
    if (!isBinary && this.outgoing?.(data)) return;
    this.sendRaw(data, isBinary);
  }

  /** Send a frame past `outgoing`. */
  sendRaw(data: Buffer | string, isBinary = false): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(data, { binary: isBinary });
  }

  /** Hand the library a frame, as if the browser had sent it. */
  deliver(data: Buffer): void {
    this.onFrame(data, false);
  }

  /** The error that closed the socket, once it has closed. */
  get error(): SessionClosedError | undefined {
    return this.closeError;
  }

  /** The service's refusal, when the close carried one (docs/decisions.md D6). */
  refusal(): ServiceError | undefined {
    const cause = this.closeError?.cause;
    return cause instanceof ServiceError ? cause : undefined;
  }

  /** Close with a normal code and wait for the close to complete (at most `ms`). */
  async close(code = 1000, reason = '', ms = 3000): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    if (this.socket.readyState !== WebSocket.CLOSING) this.socket.close(code, reason);
    const timer = setTimeout(() => this.socket.terminate(), ms);
    await this.closed;
    clearTimeout(timer);
  }

  private isServiceFrame(data: Buffer): boolean {
    // CDP frames from Chromium start with {"id": or {"method":; only small other frames are parsed.
    if (data.length > 65536 || data[0] !== 0x7b) return false;
    const head = data.subarray(0, 10).toString('latin1');
    if (head.startsWith('{"id":') || head.startsWith('{"method":')) {
      return (
        head.startsWith('{"id":') && data.subarray(0, 20).toString('latin1').startsWith(`{"id":${RESERVED_CDP_ID},`)
      );
    }
    try {
      const body = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      if (typeof body.code === 'string' && typeof body.message === 'string' && !('id' in body) && !('method' in body)) {
        this.serviceError = ServiceError.fields(body);
        return true;
      }
    } catch {}
    return false;
  }

  private finish(code: number, rawReason: string): void {
    if (this.closeError) return;
    if (this.pingTimer) clearInterval(this.pingTimer);
    const reason = redact(rawReason);
    let cause: ServiceError | undefined;
    const match = /^(ERR::[A-Z0-9_:]+):\s*(.*)$/s.exec(reason);
    if (this.serviceError || (REFUSAL_CLOSE_CODES.has(code) && match)) {
      const fromReason: Partial<ServiceErrorFields> = match ? { code: match[1] ?? '', message: match[2] ?? '' } : {};
      const fields = this.serviceError ?? ServiceError.fields({}, { status: closeStatus(code) });
      cause = browserError({
        ...fields,
        code: fields.code.startsWith('HTTP_') && fromReason.code ? fromReason.code : fields.code,
        message: this.serviceError ? fields.message : (fromReason.message ?? fields.message),
        http_status_code: fields.http_status_code || closeStatus(code),
      });
    }
    const what = cause ? cause.message : reason || 'no reason given';
    this.closeError = new SessionClosedError(
      `the cloud browser session closed (code ${code}): ${what}`,
      { closeCode: code, reason, runId: this.runId },
      { cause },
    );
    this.resolveClosed(this.closeError);
  }

  private startKeepAlive(seconds: number): void {
    let waiting = false;
    this.socket.on('pong', () => {
      waiting = false;
    });
    this.pingTimer = setInterval(() => {
      if (waiting) {
        this.serviceError = undefined;
        this.socket.terminate();
        this.finish(1006, `no answer to a keep-alive ping within ${seconds} s: the connection is dead`);
        return;
      }
      waiting = true;
      this.socket.ping();
    }, seconds * 1000);
    this.pingTimer.unref();
  }
}

async function readBody(res: import('node:http').IncomingMessage, limit = 65536): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) break;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Open the cloud browser's WebSocket. Resolves once upgraded, with the run id and salt of
 * the 101 answer; a non-101 answer rejects with the service's error (docs/decisions.md D6), a network
 * failure with a {@link ConnectionError}, a slow handshake with a {@link TimeoutError}.
 * No message names the URL's query.
 */
export function openCloudSocket(url: URL, options: OpenSocketOptions = {}): Promise<CloudSocket> {
  const timeout = options.timeout ?? CONNECT_DEFAULTS.timeout;
  const where = redactUrl(`${url.protocol}//${url.host}${url.pathname}`);
  return new Promise<CloudSocket>((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(options.signal.reason);
      return;
    }
    let settled = false;
    let headers: Record<string, string | string[] | undefined> = {};
    const socket = new WebSocket(url, {
      perMessageDeflate: false,
      maxPayload: MAX_FRAME_BYTES,
      handshakeTimeout: timeout,
      followRedirects: false,
      skipUTF8Validation: true,
      // One message a tick, as a browser's WebSocket and Puppeteer's own transport deliver them:
      // with several in one tick, Puppeteer answers a binding called while a page loads too late.
      allowSynchronousEvents: false,
    });
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      socket.removeAllListeners('open');
      socket.terminate();
      reject(error);
    };
    const onAbort = () => fail(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    socket.on('upgrade', (res) => {
      headers = res.headers;
    });
    socket.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      readBody(res)
        .catch(() => '')
        .then((text) => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {}
          const fields = ServiceError.fields(body, { status, headers: res.headers });
          fail(browserError(fields));
        });
    });
    socket.on('error', (error: Error) => {
      if (/timed out/i.test(error.message)) {
        fail(new TimeoutError(`the cloud browser at ${where} did not answer the handshake within ${timeout} ms`));
      } else {
        fail(new ConnectionError(`could not reach the cloud browser at ${where}: ${error.message}`, { cause: error }));
      }
    });
    socket.on('close', (code: number, reason: Buffer) => {
      fail(new ConnectionError(`the cloud browser at ${where} closed during the handshake (code ${code}) ${reason}`));
    });
    socket.once('open', () => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      socket.removeAllListeners('close');
      socket.removeAllListeners('error');
      resolve(new CloudSocket(socket, headers, options.keepAlive ?? CONNECT_DEFAULTS.keepAlive));
    });
  });
}
