/**
 * One VNC viewer's connection, whatever carries it: the RFB handshake, then framebuffer updates
 * on request and input events. The WebSocket view and the native TCP port are front doors that
 * hand it bytes and give it a way to send and to close.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { InputMapper } from './input.js';
import {
  ENCODING,
  framebufferUpdate,
  parseClientMessage,
  parseVersion,
  SECURITY,
  securityResult,
  securityTypes,
  serverInit,
  VERSION,
  vncResponse,
} from './rfb.js';
import type { Screencast } from './screencast.js';
import { desktopSizeRect, type Frame, tightJpegRect } from './tight.js';

/** How the bytes travel. */
export interface RfbTransport {
  send(data: Buffer): void;
  /**
   * End the connection. `refused` is true for a failed handshake (the reason was already sent as
   * RFB's SecurityResult); otherwise it is a protocol error that RFB has no message for.
   */
  close(reason: string, refused: boolean): void;
}

/** The session a viewer watches. */
export interface RfbTarget {
  /** The desktop name shown by the viewer. */
  name: string;
  screencast: Screencast;
}

export interface RfbOptions {
  /** The raw `vnc_password` that VNC authentication checks. */
  password: string;
  target: RfbTarget;
}

type State = 'version' | 'security' | 'auth' | 'init' | 'normal';

export class RfbConnection {
  private input: Buffer = Buffer.alloc(0);
  private state: State = 'version';
  private minor = 8;
  private readonly challenge = randomBytes(16);
  private width = 0;
  private height = 0;
  private encodings = new Set<number>();
  private requested = false;
  private pending: Frame | undefined;
  private readonly mapper = new InputMapper();
  private closed = false;
  private readonly viewer = (frame: Frame) => {
    this.pending = frame;
    this.update();
  };

  constructor(
    private readonly transport: RfbTransport,
    private readonly options: RfbOptions,
  ) {
    transport.send(VERSION);
  }

  /** Bytes from the viewer. */
  receive(data: Buffer): void {
    this.input = this.input.length ? Buffer.concat([this.input, data]) : data;
    while (!this.closed && this.input.length > 0 && this.step()) {}
  }

  /** The transport closed. */
  ended(): void {
    this.closed = true;
    this.options.target.screencast.leave(this.viewer);
  }

  private get screencast(): Screencast {
    return this.options.target.screencast;
  }

  private take(n: number): Buffer {
    const out = this.input.subarray(0, n);
    this.input = this.input.subarray(n);
    return out;
  }

  /** Leave at once, after the handshake: RFB has no message for it, so the reason goes in the close. */
  private abort(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.transport.close(reason, false);
  }

  /** Refuse during the handshake: a failed SecurityResult, its reason (RFB 3.8 only), then close. */
  private refuse(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.transport.send(securityResult(reason, this.minor));
    this.transport.close(reason, true);
  }

  private update(): void {
    if (!this.requested || !this.pending || this.closed) return;
    const frame = this.pending;
    this.pending = undefined;
    this.requested = false;
    const rects: Buffer[] = [];
    let count = 1;
    if ((frame.width !== this.width || frame.height !== this.height) && this.encodings.has(ENCODING.desktopSize)) {
      this.width = frame.width;
      this.height = frame.height;
      rects.push(desktopSizeRect(this.width, this.height));
      count++;
    }
    rects.push(...tightJpegRect(frame.jpeg, Math.min(frame.width, this.width), Math.min(frame.height, this.height)));
    this.transport.send(framebufferUpdate(rects, count));
  }

  /** Handle what has arrived; returns false when more bytes are needed. */
  private step(): boolean {
    switch (this.state) {
      case 'version': {
        if (this.input.length < 12) return false;
        const minor = parseVersion(this.take(12));
        if (minor === undefined) {
          this.abort('not an RFB client');
          return false;
        }
        this.minor = minor;
        if (minor >= 7) {
          this.transport.send(securityTypes([SECURITY.vncAuth]));
          this.state = 'security';
        } else {
          const type = Buffer.alloc(4);
          type.writeUInt32BE(SECURITY.vncAuth);
          this.transport.send(type);
          this.transport.send(this.challenge);
          this.state = 'auth';
        }
        return true;
      }
      case 'security': {
        const type = this.take(1)[0];
        if (type !== SECURITY.vncAuth) {
          this.refuse('only VNC authentication is offered');
          return false;
        }
        this.transport.send(this.challenge);
        this.state = 'auth';
        return true;
      }
      case 'auth': {
        if (this.input.length < 16) return false;
        if (!timingSafeEqual(this.take(16), vncResponse(this.options.password, this.challenge))) {
          this.refuse('wrong VNC password');
          return false;
        }
        this.transport.send(securityResult(undefined, this.minor));
        this.state = 'init';
        return true;
      }
      case 'init': {
        this.take(1); // ClientInit's shared flag: every viewer shares the page.
        this.state = 'normal';
        void this.screencast.join(this.viewer).then((first) => this.greet(first));
        return true;
      }
      case 'normal':
        return this.message();
    }
  }

  private greet(first: Frame | undefined): void {
    if (this.closed) return;
    this.width = first?.width ?? 1280;
    this.height = first?.height ?? 720;
    this.transport.send(serverInit(this.width, this.height, this.options.target.name));
    this.pending ??= first;
    this.update();
  }

  private message(): boolean {
    const parsed = parseClientMessage(this.input);
    if (!parsed) return false;
    if ('error' in parsed) {
      this.abort(parsed.error);
      return false;
    }
    this.take(parsed.size);
    const { message } = parsed;
    switch (message.type) {
      case 'setEncodings':
        this.encodings = new Set(message.encodings);
        if (!this.encodings.has(ENCODING.tight)) {
          this.abort('the VNC view sends Tight JPEG pictures: enable the Tight encoding');
        }
        break;
      case 'updateRequest':
        this.requested = true;
        // A full (not incremental) request wants the picture again even if it has not changed.
        if (!message.incremental && !this.pending) this.pending = this.screencast.latest;
        this.update();
        break;
      case 'key':
        this.screencast.input(this.mapper.key(message.down, message.keysym));
        break;
      case 'pointer':
        for (const event of this.mapper.pointer(
          message.mask,
          message.x,
          message.y,
          this.screencast.latest?.scale ?? 1,
        )) {
          this.screencast.input(event);
        }
        break;
    }
    return !this.closed;
  }
}
