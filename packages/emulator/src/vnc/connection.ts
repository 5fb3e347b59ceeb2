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
  VENCRYPT_PLAIN,
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
  /** Called once the viewer is let in, with a way to close it (when the session ends); returns a detach. */
  attach?(close: (reason: string) => void): () => void;
}

/**
 * Who may watch, and how (docs/decisions.md D5). Each security type is offered when its field is set, None first
 * (a client allowed without a password takes it).
 */
export interface RfbSecurity {
  /** Security type None: the session a client may watch without credentials (it is in `hitl_allowed_networks`). */
  none?: RfbTarget;
  /** VNC authentication (the WebSocket view): the raw `vnc_password` and the session it opens. */
  vncAuth?: { password: string; target: RfbTarget };
  /**
   * VeNCrypt with its Plain sub-type (the native port): the session that the username and password
   * open, or undefined. The failure says nothing about which part was wrong.
   */
  plain?: (username: string, password: string) => RfbTarget | undefined;
}

const REFUSED = 'wrong username or password';

type State = 'version' | 'security' | 'auth' | 'vencryptVersion' | 'vencryptSubtype' | 'plain' | 'init' | 'normal';

/** One viewer's RFB conversation, from the version greeting to the last update. */
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
  private target: RfbTarget | undefined;
  private detach: (() => void) | undefined;
  private readonly viewer = (frame: Frame) => {
    this.pending = frame;
    this.update();
  };

  constructor(
    private readonly transport: RfbTransport,
    private readonly security: RfbSecurity,
  ) {
    transport.send(VERSION);
  }

  /** Close the connection from the server's side (the session ended). */
  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.transport.close(reason, true);
    this.ended();
  }

  /** Bytes from the viewer. */
  receive(data: Buffer): void {
    this.input = this.input.length ? Buffer.concat([this.input, data]) : data;
    while (!this.closed && this.input.length > 0 && this.step()) {}
  }

  /** The transport closed. */
  ended(): void {
    this.closed = true;
    this.detach?.();
    this.detach = undefined;
    this.target?.screencast.leave(this.viewer);
  }

  private get screencast(): Screencast {
    return (this.target as RfbTarget).screencast;
  }

  /** The security types on offer, in the order of preference. */
  private offered(): number[] {
    const types: number[] = [];
    if (this.security.none) types.push(SECURITY.none);
    if (this.security.vncAuth) types.push(SECURITY.vncAuth);
    if (this.security.plain && this.minor >= 7) types.push(SECURITY.veNCrypt);
    return types;
  }

  /** Let the viewer in: SecurityResult OK, then wait for ClientInit. */
  private admit(target: RfbTarget): void {
    this.target = target;
    this.transport.send(securityResult(undefined, this.minor));
    this.detach = target.attach?.((reason) => this.close(reason));
    this.state = 'init';
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
      case 'version':
        return this.version();
      case 'security':
        return this.securityType();
      case 'auth':
        return this.vncAuth();
      case 'vencryptVersion':
        return this.vencryptVersion();
      case 'vencryptSubtype':
        return this.vencryptSubtype();
      case 'plain':
        return this.plain();
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

  /** The client's ProtocolVersion: offer the security types (3.7, 3.8) or pick one (3.3). */
  private version(): boolean {
    if (this.input.length < 12) return false;
    const minor = parseVersion(this.take(12));
    if (minor === undefined) {
      this.abort('not an RFB client');
      return false;
    }
    this.minor = minor;
    const types = this.offered();
    if (minor >= 7) {
      if (types.length === 0) return this.noTypes();
      this.transport.send(securityTypes(types));
      this.state = 'security';
      return true;
    }
    // RFB 3.3: the server picks the type.
    const type = types.find((t) => t !== SECURITY.veNCrypt);
    if (type === undefined) return this.noTypes();
    const word = Buffer.alloc(4);
    word.writeUInt32BE(type);
    this.transport.send(word);
    return this.chosen(type);
  }

  /** The security type the client chose. */
  private securityType(): boolean {
    const type = this.take(1)[0] as number;
    if (!this.offered().includes(type)) {
      this.refuse(`security type ${type} is not offered`);
      return false;
    }
    return this.chosen(type);
  }

  /** Classic VNC authentication: the response to our challenge. */
  private vncAuth(): boolean {
    if (this.input.length < 16) return false;
    const auth = this.security.vncAuth as NonNullable<RfbSecurity['vncAuth']>;
    if (!timingSafeEqual(this.take(16), vncResponse(auth.password, this.challenge))) {
      this.refuse('wrong VNC password');
      return false;
    }
    this.admit(auth.target);
    return true;
  }

  /** VeNCrypt's version: 0.2 only, then its one sub-type, Plain. */
  private vencryptVersion(): boolean {
    if (this.input.length < 2) return false;
    const [major, minor] = this.take(2);
    if (major !== 0 || minor !== 2) {
      // VeNCrypt's own failure: a non-zero byte after the version, then close.
      this.transport.send(Buffer.from([0xff]));
      this.abort(`VeNCrypt ${major}.${minor} is not spoken: 0.2 is`);
      return false;
    }
    // OK, then one sub-type: Plain.
    const offer = Buffer.alloc(6);
    offer[1] = 1;
    offer.writeUInt32BE(VENCRYPT_PLAIN, 2);
    this.transport.send(offer);
    this.state = 'vencryptSubtype';
    return true;
  }

  /** The VeNCrypt sub-type the client chose. */
  private vencryptSubtype(): boolean {
    if (this.input.length < 4) return false;
    const subtype = this.take(4).readUInt32BE(0);
    if (subtype !== VENCRYPT_PLAIN) {
      this.refuse(`VeNCrypt sub-type ${subtype} is not offered: Plain (256) is`);
      return false;
    }
    this.state = 'plain';
    return true;
  }

  /** VeNCrypt Plain: a user name (the run id) and a password, found by the security callback. */
  private plain(): boolean {
    if (this.input.length < 8) return false;
    const userLength = this.input.readUInt32BE(0);
    const passLength = this.input.readUInt32BE(4);
    if (userLength > 1024 || passLength > 1024) {
      this.refuse(REFUSED);
      return false;
    }
    if (this.input.length < 8 + userLength + passLength) return false;
    this.take(8);
    const username = this.take(userLength).toString('utf8');
    const password = this.take(passLength).toString('utf8');
    const target = this.security.plain?.(username, password);
    if (!target) {
      this.refuse(REFUSED);
      return false;
    }
    this.admit(target);
    return true;
  }

  /** Go on with the security type the client (or, in 3.3, the server) chose. */
  private chosen(type: number): boolean {
    if (type === SECURITY.none) {
      const target = this.security.none as RfbTarget;
      // RFB 3.3 and 3.7 send no SecurityResult after None.
      if (this.minor >= 8) this.admit(target);
      else {
        this.target = target;
        this.detach = target.attach?.((reason) => this.close(reason));
        this.state = 'init';
      }
    } else if (type === SECURITY.vncAuth) {
      this.transport.send(this.challenge);
      this.state = 'auth';
    } else {
      this.transport.send(Buffer.from([0, 2]));
      this.state = 'vencryptVersion';
    }
    return true;
  }

  /** Nothing on offer for this client: an empty list and the reason (3.7+), or type 0 (3.3), then close. */
  private noTypes(): false {
    const reason = Buffer.from('this client may not watch the session', 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(reason.length);
    this.transport.send(Buffer.concat([this.minor >= 7 ? Buffer.from([0]) : Buffer.alloc(4), length, reason]));
    this.closed = true;
    this.transport.close(reason.toString(), true);
    return false;
  }

  private greet(first: Frame | undefined): void {
    if (this.closed) return;
    this.width = first?.width ?? 1280;
    this.height = first?.height ?? 720;
    this.transport.send(serverInit(this.width, this.height, (this.target as RfbTarget).name));
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
