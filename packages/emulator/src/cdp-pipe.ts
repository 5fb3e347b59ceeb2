/**
 * Chromium's DevTools over `--remote-debugging-pipe`, shared by several clients.
 *
 * The pipe is the only way into the browser: no DevTools port on loopback that another local
 * process could drive, and a browser whose emulator died reads the end of its pipe and quits.
 * Each client (the emulator's own control, every connected Playwright or Puppeteer) gets a
 * channel: its own browser-target session (`Target.attachToBrowserTarget`), which Chromium
 * treats as a separate DevTools client (its own auto-attach, its own child sessions, its own
 * browser contexts). The pipe rewrites ids so that each channel keeps its own numbering, tags
 * a channel's browser-level commands with its session, and hands each message to the channel
 * that owns its session; a channel can neither read nor drive another channel's sessions.
 */
import type { Readable, Writable } from 'node:stream';

/** A client's command as the pipe read it, before it is written to the browser. */
export interface ClientRequest {
  /** In the client's numbering. */
  id: number;
  method: string;
  /** May be changed in place before the command goes on. */
  params: Record<string, unknown>;
  /** The session the client named; undefined for its browser session. */
  sessionId: string | undefined;
  /** The target of that session; undefined for the browser session. */
  targetId: string | undefined;
}

/** One client of a shared pipe: send CDP messages as if over a WebSocket of one's own. */
export interface CdpChannel {
  /**
   * Sees each of the client's commands first: returns true when it answers the command itself
   * (with `answer`), false to let it go on to the browser, its params as the hook left them.
   */
  intercept: ((request: ClientRequest) => boolean) | undefined;
  /** Answer a command `intercept` kept, in the client's numbering. */
  answer(
    request: ClientRequest,
    outcome: { result: unknown } | { error: { code: number; message: string; data?: string } },
  ): void;
  /** Send the client an event on one of its sessions (undefined: its browser session). */
  emit(sessionId: string | undefined, method: string, params: unknown): void;
  /** The client's sessions attached to `targetId`. */
  sessionsOf(targetId: string): string[];
  /** Send on a command `intercept` kept, later: answered to the client as if it had gone at once. */
  release(request: ClientRequest): void;
  /** Send a command of the emulator's own on one of the client's sessions, ahead of what follows; the answer is dropped. */
  inject(method: string, params: Record<string, unknown>, sessionId: string): void;
  /** Send one CDP message (a JSON object as text). */
  send(message: string | Buffer): void;
  /** Called with every message for this client (a JSON object as UTF-8). */
  onmessage: ((message: Buffer) => void) | undefined;
  /** Called once when the channel closes, whichever side closed it. */
  onclose: (() => void) | undefined;
  /** Leave: the browser detaches this client's sessions and disposes of its contexts. */
  close(): void;
  readonly closed: boolean;
}

/** A request in flight: a channel's (answered in its numbering) or the pipe's own (`done`). */
type Pending =
  | { channel: Channel; id: number; method: string; targetId?: string | undefined; done?: undefined }
  | { channel?: undefined; done: (answer: { result?: Record<string, unknown> } | undefined) => void };

/** A CDP error answer to a request the pipe refuses, in the client's own numbering. */
const refusal = (id: unknown, message: string) => Buffer.from(JSON.stringify({ id, error: { code: -32001, message } }));

/** The leading `{"id":123,` Chromium writes first in every answer. */
const ANSWER_HEAD = /^\{"id":(\d+),/;
/** The trailing `,"sessionId":"…"}` Chromium writes last in every message of a session. */
const SESSION_TAIL = /,"sessionId":"([0-9A-Fa-f]+)"\}$/;
const TAIL_BYTES = 64;
const CLOSE_BRACE = Buffer.from('}');

class Channel implements CdpChannel {
  onmessage: ((message: Buffer) => void) | undefined;
  onclose: (() => void) | undefined;
  intercept: ((request: ClientRequest) => boolean) | undefined;
  closed = false;
  /** This client's browser-target session, once attached. */
  session: string | undefined;
  private readonly queued: (string | Buffer)[] = [];

  constructor(private readonly pipe: CdpPipe) {}

  send(message: string | Buffer): void {
    if (this.closed) return;
    if (this.session === undefined) this.queued.push(message);
    else this.pipe.forward(this, message);
  }

  ready(session: string): void {
    this.session = session;
    for (const message of this.queued.splice(0)) this.pipe.forward(this, message);
  }

  deliver(message: Buffer): void {
    if (!this.closed) this.onmessage?.(message);
  }

  answer(
    request: ClientRequest,
    outcome: { result: unknown } | { error: { code: number; message: string; data?: string } },
  ): void {
    const session = request.sessionId === undefined ? {} : { sessionId: request.sessionId };
    this.deliver(Buffer.from(JSON.stringify({ id: request.id, ...outcome, ...session })));
  }

  emit(sessionId: string | undefined, method: string, params: unknown): void {
    this.deliver(Buffer.from(JSON.stringify({ method, params, ...(sessionId === undefined ? {} : { sessionId }) })));
  }

  sessionsOf(targetId: string): string[] {
    return this.pipe.sessionsOf(this, targetId);
  }

  inject(method: string, params: Record<string, unknown>, sessionId: string): void {
    this.pipe.inject(this, method, params, sessionId);
  }

  release(request: ClientRequest): void {
    const session = request.sessionId ?? this.session;
    if (session !== undefined) this.pipe.send(this, request.id, request.method, request.params, session);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queued.length = 0;
    this.pipe.leave(this);
    this.onclose?.();
  }
}

/** Chromium's end of `--remote-debugging-pipe` (fd 3 it reads, fd 4 it writes), shared by channels. */
export class CdpPipe {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Every session's owner: browser-target sessions and the child sessions they attached. */
  private readonly owners = new Map<string, Channel>();
  /** The target of every client session but the browser-target ones. */
  private readonly targets = new Map<string, string>();
  private readonly channels = new Set<Channel>();
  private buffered: Buffer[] = [];
  private ended = false;
  private readonly readyAnswer: Promise<void>;

  constructor(
    private readonly input: Writable,
    output: Readable,
  ) {
    input.on('error', () => this.end());
    output.on('data', (chunk: Buffer) => this.read(chunk));
    output.on('error', () => this.end());
    output.on('close', () => this.end());
    this.readyAnswer = new Promise((resolve) =>
      this.request('Browser.getVersion', {}, (answer) => answer && resolve()),
    );
  }

  /** Resolves once the browser answers on its pipe (never, if it does not start). */
  ready(): Promise<void> {
    return this.readyAnswer;
  }

  /** A new client with its own browser-target session; resolves once the browser attached it. */
  open(): CdpChannel {
    const channel = new Channel(this);
    if (this.ended) {
      channel.close();
      return channel;
    }
    this.channels.add(channel);
    this.request('Target.attachToBrowserTarget', {}, (answer) => {
      const session = answer?.result?.sessionId;
      if (typeof session !== 'string') return channel.close();
      if (channel.closed) return this.detach(session);
      this.owners.set(session, channel);
      channel.ready(session);
    });
    return channel;
  }

  /** Write a message as `channel`: its id renumbered, its session checked or set to the channel's own. */
  forward(channel: Channel, message: string | Buffer): void {
    let parsed: { id?: unknown; method?: unknown; params?: unknown; sessionId?: unknown };
    try {
      parsed = JSON.parse(typeof message === 'string' ? message : message.toString('utf8'));
    } catch {
      return; // Chromium ignores what is not JSON; so do we.
    }
    if (typeof parsed.id !== 'number' || typeof parsed.method !== 'string') {
      channel.deliver(refusal(parsed.id ?? null, 'Message must have integer "id" and string "method" properties'));
      return;
    }
    const session = parsed.sessionId === undefined ? channel.session : parsed.sessionId;
    if (typeof session !== 'string' || this.owners.get(session) !== channel) {
      channel.deliver(refusal(parsed.id, `Session with given id not found.`));
      return;
    }
    let params = (typeof parsed.params === 'object' && parsed.params !== null ? parsed.params : {}) as Record<
      string,
      unknown
    >;
    if (channel.intercept) {
      const named = session === channel.session ? undefined : session;
      const request = {
        id: parsed.id,
        method: parsed.method,
        params,
        sessionId: named,
        targetId: this.targets.get(session),
      };
      if (channel.intercept(request)) return;
      params = request.params;
    }
    this.send(channel, parsed.id, parsed.method, params, session);
  }

  /** Write a client's command, to be answered to it in its numbering. */
  send(channel: Channel, clientId: number, method: string, params: Record<string, unknown>, session: string): void {
    if (channel.closed || this.owners.get(session) !== channel) return;
    const id = this.nextId++;
    const targetId = method === 'Target.attachToTarget' ? (params.targetId as string | undefined) : undefined;
    this.pending.set(id, { channel, id: clientId, method, targetId });
    this.write({ id, method, params, sessionId: session });
  }

  /** A command of the emulator's on a session `channel` owns; its answer goes nowhere. */
  inject(channel: Channel, method: string, params: Record<string, unknown>, sessionId: string): void {
    if (this.owners.get(sessionId) !== channel) return;
    const id = this.nextId++;
    this.pending.set(id, { done: () => {} });
    this.write({ id, method, params, sessionId });
  }

  /** `channel`'s sessions attached to `targetId`. */
  sessionsOf(channel: Channel, targetId: string): string[] {
    const out: string[] = [];
    for (const [session, target] of this.targets)
      if (target === targetId && this.owners.get(session) === channel) out.push(session);
    return out;
  }

  /** The channel left: forget its requests and sessions, and detach its browser session. */
  leave(channel: Channel): void {
    this.channels.delete(channel);
    for (const [id, p] of this.pending) if (p.channel === channel) this.pending.delete(id);
    for (const [session, owner] of this.owners)
      if (owner === channel) {
        this.owners.delete(session);
        this.targets.delete(session);
      }
    if (channel.session !== undefined) this.detach(channel.session);
  }

  private detach(session: string): void {
    this.write({ id: this.nextId++, method: 'Target.detachFromTarget', params: { sessionId: session } });
  }

  /** The pipe's own request on the root session; `done` gets the answer, or undefined if the pipe ends. */
  private request(
    method: string,
    params: Record<string, unknown>,
    done: Extract<Pending, { done: unknown }>['done'],
  ): void {
    const id = this.nextId++;
    this.pending.set(id, { done });
    this.write({ id, method, params });
  }

  private write(message: Record<string, unknown>): void {
    if (this.ended) return;
    this.input.write(`${JSON.stringify(message)}\0`);
  }

  private read(chunk: Buffer): void {
    let start = 0;
    let nul = chunk.indexOf(0);
    while (nul !== -1) {
      const piece = chunk.subarray(start, nul);
      const message = this.buffered.length > 0 ? Buffer.concat([...this.buffered, piece]) : piece;
      this.buffered = [];
      this.dispatch(message);
      start = nul + 1;
      nul = chunk.indexOf(0, start);
    }
    if (start < chunk.length) this.buffered.push(chunk.subarray(start));
  }

  /**
   * Hand one message from the browser to the channel that owns it, in that channel's terms. The
   * id and the session are read from the message's first and last bytes (Chromium writes `id`
   * first and `sessionId` last), so a screenshot of megabytes is neither parsed nor decoded; an
   * event without a session (the root's, rare) or a message in any other shape is parsed.
   */
  private dispatch(message: Buffer, reordered = false): void {
    const head = ANSWER_HEAD.exec(message.subarray(0, 24).toString('latin1'));
    const tail = SESSION_TAIL.exec(message.subarray(-TAIL_BYTES).toString('latin1'));
    if (!head && !tail) return reordered ? undefined : this.dispatchParsed(message);
    const session = tail?.[1];
    /** The message without its `sessionId` when it is `channel`'s browser session (the client never named it). */
    const body = (channel: Channel, from = 0) =>
      tail && session === channel.session
        ? [message.subarray(from, -tail[0].length), CLOSE_BRACE]
        : [message.subarray(from)];
    if (head?.[1] !== undefined) {
      const pending = this.pending.get(Number(head[1]));
      if (!pending) return;
      this.pending.delete(Number(head[1]));
      if (pending.done) return pending.done(JSON.parse(message.toString('utf8')));
      if (pending.method === 'Target.attachToTarget' || pending.method === 'Target.attachToBrowserTarget') {
        const { result } = JSON.parse(message.toString('utf8')) as { result?: { sessionId?: string } };
        if (result?.sessionId) {
          this.owners.set(result.sessionId, pending.channel);
          if (pending.targetId) this.targets.set(result.sessionId, pending.targetId);
        }
      }
      const id = Buffer.from(`{"id":${pending.id},`);
      pending.channel.deliver(Buffer.concat([id, ...body(pending.channel, head[0].length)]));
      return;
    }
    const owner = session === undefined ? undefined : this.owners.get(session);
    if (!owner) return;
    if (this.isTargetEvent(message)) this.track(owner, message);
    owner.deliver(Buffer.concat(body(owner)));
  }

  /**
   * The slow path: a message whose id or session is not where Chromium usually writes them is
   * written again in that order (id first, sessionId last) and dispatched once more. One with
   * neither is the root session's own (no client's).
   */
  private dispatchParsed(message: Buffer): void {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(message.toString('utf8'));
    } catch {
      return;
    }
    const { id, sessionId, ...rest } = parsed;
    if (typeof id !== 'number' && typeof sessionId !== 'string') return;
    const ordered = {
      ...(typeof id === 'number' ? { id } : {}),
      ...rest,
      ...(typeof sessionId === 'string' ? { sessionId } : {}),
    };
    this.dispatch(Buffer.from(JSON.stringify(ordered)), true);
  }

  private isTargetEvent(message: Buffer): boolean {
    const head = message.subarray(0, 40).toString('latin1');
    return (
      head.startsWith('{"method":"Target.attachedToTarget"') || head.startsWith('{"method":"Target.detachedFromTarget"')
    );
  }

  /** Who owns a child session: the channel whose session attached it. */
  private track(owner: Channel, message: Buffer): void {
    const { method, params } = JSON.parse(message.toString('utf8')) as {
      method: string;
      params: { sessionId?: string; targetInfo?: { targetId?: string } };
    };
    if (!params.sessionId) return;
    if (method === 'Target.attachedToTarget') {
      this.owners.set(params.sessionId, owner);
      if (params.targetInfo?.targetId) this.targets.set(params.sessionId, params.targetInfo.targetId);
    } else if (this.owners.get(params.sessionId) === owner && params.sessionId !== owner.session) {
      this.owners.delete(params.sessionId);
      this.targets.delete(params.sessionId);
    }
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const p of this.pending.values()) p.done?.(undefined);
    this.pending.clear();
    for (const channel of [...this.channels]) channel.close();
  }
}
