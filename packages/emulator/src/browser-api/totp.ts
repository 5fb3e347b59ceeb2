/** One-time codes of RFC 6238 (TOTP over RFC 4226 HOTP), for vault items of type `totp`. */
import { createHmac } from 'node:crypto';

/** Decode RFC 4648 base32 (padding and case ignored). */
export function base32Decode(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const clean = text.toUpperCase().replace(/=+$/, '').replace(/\s+/g, '');
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of clean) {
    const v = alphabet.indexOf(ch);
    if (v < 0) throw new Error('not base32');
    value = (value << 5) | v;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** What a TOTP code is computed with. */
export interface TotpOptions {
  /** @default 'SHA1' */
  algorithm?: 'SHA1' | 'SHA256' | 'SHA512' | undefined;
  /** @default 6 */
  digits?: number | undefined;
  /** Seconds a code lasts. @default 30 */
  period?: number | undefined;
}

/**
 * The code of the time step holding `timeMs` (RFC 6238 section 4).
 *
 * @example
 * totp(base32Decode('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'), 59_000, { digits: 8 }) // '94287082'
 */
export function totp(key: Buffer, timeMs: number, options: TotpOptions = {}): string {
  const digits = options.digits ?? 6;
  const counter = Math.floor(timeMs / 1000 / (options.period ?? 30));
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac((options.algorithm ?? 'SHA1').toLowerCase(), key)
    .update(message)
    .digest();
  const offset = (mac[mac.length - 1] as number) & 0x0f;
  const code = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits;
  return String(code).padStart(digits, '0');
}
