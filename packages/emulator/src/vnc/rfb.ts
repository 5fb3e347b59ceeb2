/**
 * RFB 3.8 (RFC 6143) as the emulator's VNC server speaks it: the client's messages parsed and the
 * server's built. Pure: bytes in, values out.
 */
import { createCipheriv } from 'node:crypto';

/** Security types (RFC 6143 7.1.2, and VeNCrypt's registration). */
export const SECURITY = { none: 1, vncAuth: 2, veNCrypt: 19 } as const;
/** The VeNCrypt sub-type the native port offers: a username and a password, in the clear. */
export const VENCRYPT_PLAIN = 256;
export const ENCODING = { tight: 7, desktopSize: -223 } as const;
/** The largest client message held (clipboard text): 1 MiB. */
export const MAX_MESSAGE = 1 << 20;

/** A client message of the normal phase (RFC 6143 7.5). */
export type ClientMessage =
  | { type: 'setPixelFormat' }
  | { type: 'setEncodings'; encodings: number[] }
  | { type: 'updateRequest'; incremental: boolean }
  | { type: 'key'; down: boolean; keysym: number }
  | { type: 'pointer'; mask: number; x: number; y: number }
  | { type: 'cutText' };

/** A parsed message and the bytes it took, `undefined` when more bytes are needed, or a protocol error. */
export type Parsed = { message: ClientMessage; size: number } | { error: string } | undefined;

const FIXED_SIZE: Record<number, number> = { 0: 20, 3: 10, 4: 8, 5: 6 };

/** Parse the client message at the start of `input`. */
export function parseClientMessage(input: Buffer): Parsed {
  if (input.length < 1) return undefined;
  const type = input[0] as number;
  if (type === 2) {
    if (input.length < 4) return undefined;
    const size = 4 + 4 * input.readUInt16BE(2);
    if (input.length < size) return undefined;
    const encodings = Array.from({ length: (size - 4) / 4 }, (_, i) => input.readInt32BE(4 + 4 * i));
    return { message: { type: 'setEncodings', encodings }, size };
  }
  if (type === 6) {
    if (input.length < 8) return undefined;
    const size = 8 + Math.abs(input.readInt32BE(4));
    if (size > MAX_MESSAGE) return { error: 'clipboard text over 1 MiB' };
    if (input.length < size) return undefined;
    return { message: { type: 'cutText' }, size };
  }
  const size = FIXED_SIZE[type];
  if (size === undefined) return { error: `unsupported RFB message type ${type}` };
  if (input.length < size) return undefined;
  if (type === 0) return { message: { type: 'setPixelFormat' }, size };
  if (type === 3) return { message: { type: 'updateRequest', incremental: input[1] !== 0 }, size };
  if (type === 4) return { message: { type: 'key', down: input[1] === 1, keysym: input.readUInt32BE(4) }, size };
  return {
    message: { type: 'pointer', mask: input[1] as number, x: input.readUInt16BE(2), y: input.readUInt16BE(4) },
    size,
  };
}

/** The minor version of a ProtocolVersion message (`RFB 003.00N\n`), or undefined when it is not one. */
export function parseVersion(bytes: Buffer): number | undefined {
  const match = /^RFB 003\.00(\d)\n$/.exec(bytes.toString('latin1'));
  return match ? Math.min(8, Number(match[1])) : undefined;
}

export const VERSION = Buffer.from('RFB 003.008\n', 'latin1');

/** The server's list of security types (3.7 and later). */
export function securityTypes(types: readonly number[]): Buffer {
  return Buffer.from([types.length, ...types]);
}

/** A SecurityResult: OK, or failed with its reason (the reason is sent from 3.8 on). */
export function securityResult(reason: string | undefined, minor: number): Buffer {
  if (reason === undefined) return Buffer.alloc(4);
  const text = Buffer.from(reason, 'utf8');
  const head = Buffer.alloc(8);
  head.writeUInt32BE(1, 0);
  head.writeUInt32BE(text.length, 4);
  return minor >= 8 ? Buffer.concat([head, text]) : head.subarray(0, 4);
}

/** ServerInit: the framebuffer size, 32-bit true colour little-endian RGB, and the desktop name. */
export function serverInit(width: number, height: number, name: string): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  const init = Buffer.alloc(24);
  init.writeUInt16BE(width, 0);
  init.writeUInt16BE(height, 2);
  // 32 bits a pixel, depth 24, little-endian, true colour, 8 bits a channel: red, green, blue.
  Buffer.from([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0]).copy(init, 4);
  init.writeUInt32BE(nameBytes.length, 20);
  return Buffer.concat([init, nameBytes]);
}

/** A FramebufferUpdate of already encoded rectangles. */
export function framebufferUpdate(rects: readonly Buffer[], count: number): Buffer {
  const start = Buffer.alloc(4);
  start.writeUInt16BE(count, 2);
  return Buffer.concat([start, ...rects]);
}

/** The 16-byte answer to a VNC challenge: DES with the password's bytes, each bit-reversed, as key. */
export function vncResponse(password: string, challenge: Buffer): Buffer {
  const key = Buffer.alloc(8);
  Buffer.from(password, 'latin1').copy(key, 0, 0, 8);
  for (let i = 0; i < 8; i++) {
    let b = key[i] as number;
    let r = 0;
    for (let bit = 0; bit < 8; bit++) {
      r = (r << 1) | (b & 1);
      b >>= 1;
    }
    key[i] = r;
  }
  // Single DES is triple DES with one key three times; OpenSSL 3 keeps plain DES in its legacy provider.
  const cipher = createCipheriv('des-ede3-ecb', Buffer.concat([key, key, key]), null);
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(challenge), cipher.final()]);
}
