/** A raw RFB client over TCP for the tests: bytes read and written by hand, no VNC library. */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

export class RawRfb {
  private input: Buffer = Buffer.alloc(0);
  private wake: () => void = () => {};
  private ended = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.input = Buffer.concat([this.input, d]);
      this.wake();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('error', () => {});
  }

  static async open(port: number, host = '127.0.0.1'): Promise<RawRfb> {
    const socket = connect(port, host);
    await once(socket, 'connect');
    return new RawRfb(socket);
  }

  /** Exactly `n` bytes; fails when the server closes first. */
  async read(n: number, timeoutMs = 10_000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.input.length < n) {
      if (this.ended) throw new Error(`the server closed after ${this.input.length} of ${n} bytes`);
      if (Date.now() > deadline) throw new Error(`no ${n} bytes within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 100);
      });
    }
    const out = this.input.subarray(0, n);
    this.input = this.input.subarray(n);
    return out;
  }

  async u8(): Promise<number> {
    return (await this.read(1))[0] as number;
  }

  async u32(): Promise<number> {
    return (await this.read(4)).readUInt32BE(0);
  }

  write(...parts: (Buffer | number[])[]): void {
    this.socket.write(Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p)))));
  }

  /** Resolves when the server has closed the connection. */
  async closed(timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.ended;
  }

  close(): void {
    this.socket.destroy();
  }
}

export const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
export const i32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

/** The version exchange; returns the security types the server offers (RFB 3.8). */
export async function greet(rfb: RawRfb): Promise<number[]> {
  const version = (await rfb.read(12)).toString('latin1');
  if (version !== 'RFB 003.008\n') throw new Error(`not RFB 3.8: ${JSON.stringify(version)}`);
  rfb.write(Buffer.from('RFB 003.008\n', 'latin1'));
  const count = await rfb.u8();
  return [...(await rfb.read(count))];
}

/** VeNCrypt 0.2 with the Plain sub-type; returns the SecurityResult and its reason. */
export async function vencryptPlain(
  rfb: RawRfb,
  username: string,
  password: string,
): Promise<{ ok: boolean; reason?: string }> {
  rfb.write([19]);
  const version = [...(await rfb.read(2))];
  if (version.join('.') !== '0.2') throw new Error(`VeNCrypt ${version.join('.')}`);
  rfb.write([0, 2]);
  if ((await rfb.u8()) !== 0) throw new Error('VeNCrypt version refused');
  const subtypes = await rfb.u8();
  const offered = Array.from({ length: subtypes }, () => 0);
  for (let i = 0; i < subtypes; i++) offered[i] = await rfb.u32();
  if (!offered.includes(256)) throw new Error(`no Plain sub-type among ${offered}`);
  rfb.write(u32(256));
  const user = Buffer.from(username, 'utf8');
  const pass = Buffer.from(password, 'utf8');
  rfb.write(u32(user.length), u32(pass.length), user, pass);
  return securityResult(rfb);
}

export async function securityResult(rfb: RawRfb): Promise<{ ok: boolean; reason?: string }> {
  if ((await rfb.u32()) === 0) return { ok: true };
  return { ok: false, reason: (await rfb.read(await rfb.u32())).toString('utf8') };
}

/** ClientInit (shared) and ServerInit. */
export async function init(rfb: RawRfb): Promise<{ width: number; height: number; name: string }> {
  rfb.write([1]);
  const head = await rfb.read(24);
  const name = (await rfb.read(head.readUInt32BE(20))).toString('utf8');
  return { width: head.readUInt16BE(0), height: head.readUInt16BE(2), name };
}

/** Ask for Tight and DesktopSize, request a full update, and return the first Tight JPEG it holds. */
export async function firstPicture(rfb: RawRfb): Promise<{ jpeg: Buffer; width: number; height: number }> {
  rfb.write([2, 0], [0, 2], i32(7), i32(-223));
  rfb.write([3, 0], [0, 0, 0, 0], [0x03, 0x20, 0x02, 0x58]);
  for (;;) {
    const head = await rfb.read(4);
    if (head[0] !== 0) throw new Error(`message type ${head[0]}`);
    for (let i = head.readUInt16BE(2); i > 0; i--) {
      const rect = await rfb.read(12);
      const encoding = rect.readInt32BE(8);
      if (encoding === -223) continue;
      if (encoding !== 7) throw new Error(`encoding ${encoding}`);
      if ((await rfb.u8()) !== 0x90) throw new Error('not a Tight JPEG rectangle');
      let length = 0;
      for (let shift = 0; ; shift += 7) {
        const b = await rfb.u8();
        length |= (b & 0x7f) << shift;
        if (!(b & 0x80)) break;
      }
      return { jpeg: await rfb.read(length), width: rect.readUInt16BE(4), height: rect.readUInt16BE(6) };
    }
  }
}

/** A PointerEvent. */
export function pointer(rfb: RawRfb, mask: number, x: number, y: number): void {
  const b = Buffer.alloc(6);
  b[0] = 5;
  b[1] = mask;
  b.writeUInt16BE(x, 2);
  b.writeUInt16BE(y, 4);
  rfb.write(b);
}
