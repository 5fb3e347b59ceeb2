/**
 * A fetched body's type and text: the MIME type from `Content-Type`, else sniffed from its first
 * bytes (WHATWG MIME Sniffing, the patterns a crawler meets); and the text decoded the way a
 * browser decodes it (WHATWG Encoding and the HTML encoding sniffing algorithm): a byte order mark
 * first, then the HTTP charset, then `<meta charset>` or `http-equiv` in the first 1024 bytes,
 * then UTF-8 if the bytes are valid UTF-8, else windows-1252. Node's `TextDecoder` (full ICU)
 * decodes every legacy encoding of the WHATWG list.
 */
import { isUtf8 } from 'node:buffer';

/** What the crawler does with a body. */
export type BodyKind = 'html' | 'text' | 'xml' | 'other';

/** A body's MIME type, lower case and without parameters. */
export interface BodyType {
  mime: string;
  kind: BodyKind;
  /** The `charset` parameter of `Content-Type`, when given. */
  charset: string | undefined;
}

const MAGIC: [number[], string][] = [
  [[0x25, 0x50, 0x44, 0x46, 0x2d], 'application/pdf'],
  [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'image/png'],
  [[0x47, 0x49, 0x46, 0x38], 'image/gif'],
  [[0xff, 0xd8, 0xff], 'image/jpeg'],
  [[0x50, 0x4b, 0x03, 0x04], 'application/zip'],
  [[0x1f, 0x8b, 0x08], 'application/gzip'],
  [[0x52, 0x49, 0x46, 0x46], 'application/octet-stream'],
  [[0x1a, 0x45, 0xdf, 0xa3], 'video/webm'],
];
/** The HTML patterns of WHATWG MIME Sniffing 7.1, after leading whitespace. */
const HTML_START =
  /^(?:<!doctype html|<html|<head|<script|<iframe|<h1|<div|<font|<table|<a|<style|<title|<b|<body|<br|<p|<!--)[\s>]/i;

function kindOf(mime: string): BodyKind {
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html';
  if (mime === 'application/xml' || mime === 'text/xml' || mime.endsWith('+xml')) return 'xml';
  if (mime.startsWith('text/')) return 'text';
  return 'other';
}

/**
 * The body's type: `Content-Type` when it names one (a server's word is taken, as browsers do
 * for anything but `text/plain` guesses), else sniffed.
 */
export function bodyType(contentType: string | undefined, head: Uint8Array): BodyType {
  const [essence = '', ...params] = (contentType ?? '').split(';');
  const charset = params
    .map((p) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(p)?.[1])
    .find((c): c is string => c !== undefined);
  const mime = essence.trim().toLowerCase();
  if (mime && mime !== 'application/octet-stream' && mime.includes('/')) return { mime, kind: kindOf(mime), charset };
  const sniffed = sniff(head);
  return { mime: sniffed, kind: kindOf(sniffed), charset };
}

function sniff(head: Uint8Array): string {
  for (const [pattern, mime] of MAGIC) {
    if (pattern.every((b, i) => head[i] === b)) return mime;
  }
  if (bomOf(head)) return 'text/plain';
  const start = Buffer.from(head.subarray(0, 512)).toString('latin1').trimStart();
  if (HTML_START.test(start)) return 'text/html';
  if (/^<\?xml[\s>]/i.test(start)) return 'text/xml';
  // Binary data bytes (WHATWG 7.2): a control character no text holds.
  for (const b of head.subarray(0, 512)) {
    if (b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f))
      return 'application/octet-stream';
  }
  return 'text/plain';
}

function bomOf(bytes: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return undefined;
}

/** The WHATWG name of a label, or undefined when no decoder knows it. */
function encodingOf(label: string | undefined): string | undefined {
  if (!label) return undefined;
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    return undefined;
  }
}

/** `<meta charset>` or `<meta http-equiv="content-type" content="…charset=…">` in the first 1024 bytes. */
function metaCharset(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  for (const meta of head.matchAll(/<meta\b[^>]*>/gi)) {
    const tag = meta[0];
    const direct = /\bcharset\s*=\s*["']?\s*([^"'\s/>;]+)/i.exec(tag)?.[1];
    if (!direct) continue;
    const viaContent = /\bcontent\s*=/i.test(tag);
    if (viaContent && !/\bhttp-equiv\s*=\s*["']?\s*content-type/i.test(tag)) continue;
    const encoding = encodingOf(direct);
    if (!encoding) continue;
    // A page that says UTF-16 in its own bytes cannot be UTF-16 (WHATWG: read it as UTF-8).
    if (encoding === 'utf-16le' || encoding === 'utf-16be') return 'utf-8';
    // x-user-defined in a meta is windows-1252 (WHATWG).
    return encoding === 'x-user-defined' ? 'windows-1252' : encoding;
  }
  return undefined;
}

/** UTF-8 bytes without their byte order mark, as a decoder reads them. */
export function withoutBom(bytes: Uint8Array): Uint8Array {
  return bomOf(bytes) === 'utf-8' ? bytes.subarray(3) : bytes;
}

/** The encoding to decode a body with, and why. */
export function detectEncoding(bytes: Uint8Array, type: BodyType): { encoding: string; source: string } {
  const bom = bomOf(bytes);
  if (bom) return { encoding: bom, source: 'bom' };
  const declared = encodingOf(type.charset);
  if (declared) return { encoding: declared, source: 'http' };
  if (type.kind === 'html') {
    const meta = metaCharset(bytes);
    if (meta) return { encoding: meta, source: 'meta' };
  }
  // Validated, not decoded: the page is decoded once, where it is read.
  return { encoding: isUtf8(bytes) ? 'utf-8' : 'windows-1252', source: 'sniffed' };
}

/** windows-1252's 0x80–0x9F (WHATWG index); 0 where the byte maps to the C1 control of the same value. */
const CP1252_HIGH = [
  0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017d, 0, 0,
  0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
];

/**
 * windows-1252, which WHATWG also gives to the `latin1`, `iso-8859-1` and `us-ascii` labels.
 * Node 20's `TextDecoder` reports `windows-1252` but decodes ISO-8859-1 (0x80 is U+0080, not €).
 */
function decodeWindows1252(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) {
    const codes = Array.from(bytes.subarray(i, i + 8192), (b) =>
      b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80] || b : b,
    );
    out += String.fromCharCode(...codes);
  }
  return out;
}

/** The body as text, decoded as {@link detectEncoding} says (a BOM is not part of the text). */
export function decodeText(bytes: Uint8Array, type: BodyType): { text: string; encoding: string } {
  const { encoding } = detectEncoding(bytes, type);
  return { text: decodeAs(bytes, encoding), encoding };
}

/** The body as text in `encoding` (a WHATWG name, as detectEncoding gives it). */
export function decodeAs(bytes: Uint8Array, encoding: string): string {
  return encoding === 'windows-1252' ? decodeWindows1252(bytes) : new TextDecoder(encoding).decode(bytes);
}
