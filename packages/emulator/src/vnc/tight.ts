/** The Tight encoding's JPEG rectangles: the screencast's JPEGs are sent as they come, never decoded. */
import { ENCODING } from './rfb.js';

/** One more than the longest Tight data a compact length can announce. */
export const MAX_TIGHT = 1 << 22;

/** A picture of the page, ready to send. */
export interface Frame {
  jpeg: Buffer;
  width: number;
  height: number;
  /** CSS pixels per picture pixel, for input coordinates. */
  scale: number;
}

/** A JPEG's pixel size, from its first start-of-frame marker. */
export function jpegSize(jpeg: Buffer): { width: number; height: number } | undefined {
  let at = 2;
  while (at + 9 < jpeg.length && jpeg[at] === 0xff) {
    const marker = jpeg[at + 1] as number;
    const length = jpeg.readUInt16BE(at + 2);
    // SOF0-SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: jpeg.readUInt16BE(at + 5), width: jpeg.readUInt16BE(at + 7) };
    }
    at += 2 + length;
  }
  return undefined;
}

/**
 * A base64 JPEG from CDP as a frame; undefined when it is not a JPEG or is too large for Tight's
 * compact length (4 MiB: the next frame will do). `cssWidth` is the page's width in CSS pixels.
 */
export function toFrame(base64: string, cssWidth?: number): Frame | undefined {
  const jpeg = Buffer.from(base64, 'base64');
  const size = jpegSize(jpeg);
  if (!size || jpeg.length >= MAX_TIGHT) return undefined;
  return { jpeg, ...size, scale: cssWidth ? cssWidth / size.width : 1 };
}

/** Tight's compact length: 7 bits a byte, low first, high bit set when another byte follows. */
export function compactLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  if (n < 0x4000) return Buffer.from([(n & 0x7f) | 0x80, n >> 7]);
  return Buffer.from([(n & 0x7f) | 0x80, ((n >> 7) & 0x7f) | 0x80, n >> 14]);
}

/** A DesktopSize pseudo-rectangle announcing a new framebuffer size. */
export function desktopSizeRect(width: number, height: number): Buffer {
  const rect = Buffer.alloc(12);
  rect.writeUInt16BE(width, 4);
  rect.writeUInt16BE(height, 6);
  rect.writeInt32BE(ENCODING.desktopSize, 8);
  return rect;
}

/** A Tight rectangle at the origin holding `jpeg`, cut to the framebuffer's size. */
export function tightJpegRect(jpeg: Buffer, width: number, height: number): Buffer[] {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(width, 4);
  header.writeUInt16BE(height, 6);
  header.writeInt32BE(ENCODING.tight, 8);
  // Compression control 0x90: a JPEG picture follows, with its compact length.
  return [header, Buffer.from([0x90]), compactLength(jpeg.length), jpeg];
}
