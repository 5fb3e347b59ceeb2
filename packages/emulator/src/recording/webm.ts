/**
 * The one fix a MediaRecorder WebM needs to be seekable in a `<video>`: a Duration in its
 * Segment Info (MediaRecorder cannot know it when it writes the header). Pure: bytes in, bytes out.
 */

const ID = { ebml: 0x1a45dfa3, segment: 0x18538067, info: 0x1549a966, timecodeScale: 0x2ad7b1, duration: 0x4489 };
/** An EBML size of all ones: "unknown", as a live writer leaves the Segment. */
const UNKNOWN = -1;

interface Element {
  id: number;
  /** Where the element starts, where its data starts, and its size (UNKNOWN when not given). */
  start: number;
  dataStart: number;
  size: number;
}

/** An EBML variable-length integer at `at`: its value (marker kept for IDs) and length. */
function vint(bytes: Buffer, at: number, keepMarker: boolean): { value: number; length: number } | undefined {
  const first = bytes[at];
  if (first === undefined || first === 0) return undefined;
  const length = Math.clz32(first) - 23;
  if (length > 8 || at + length > bytes.length) return undefined;
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    const b = bytes[at + i] as number;
    if (b !== 0xff) allOnes = false;
    value = value * 256 + b;
  }
  return { value: !keepMarker && allOnes ? UNKNOWN : value, length };
}

function element(bytes: Buffer, at: number): Element | undefined {
  const id = vint(bytes, at, true);
  if (!id) return undefined;
  const size = vint(bytes, at + id.length, false);
  if (!size) return undefined;
  return { id: id.value, start: at, dataStart: at + id.length + size.length, size: size.value };
}

/** An 8-byte EBML size. */
function size8(n: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(BigInt(n));
  out[0] = 0x01;
  return out;
}

function idBytes(id: number): Buffer {
  const hex = id.toString(16);
  return Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
}

/**
 * `header` (the start of a WebM: its EBML header, Segment start and Info) with `durationMs` set
 * in the Info. Undefined when the Info is not within `header`.
 *
 * @example
 * const fixed = withDuration(firstChunk, 4_200) // then write the rest of the file after it
 */
export function withDuration(header: Buffer, durationMs: number): Buffer | undefined {
  const ebml = element(header, 0);
  if (!ebml || ebml.id !== ID.ebml || ebml.size === UNKNOWN) return undefined;
  const segment = element(header, ebml.dataStart + ebml.size);
  if (!segment || segment.id !== ID.segment) return undefined;
  let at = segment.dataStart;
  for (;;) {
    const child = element(header, at);
    if (!child || child.size === UNKNOWN) return undefined;
    const end = child.dataStart + child.size;
    if (end > header.length) return undefined;
    if (child.id !== ID.info) {
      at = end;
      continue;
    }
    let scale = 1_000_000;
    const kept: Buffer[] = [];
    for (let p = child.dataStart; p < end; ) {
      const field = element(header, p);
      if (!field || field.size === UNKNOWN) return undefined;
      const fieldEnd = field.dataStart + field.size;
      if (field.id === ID.timecodeScale) scale = header.readUIntBE(field.dataStart, Math.min(6, field.size)) || scale;
      if (field.id !== ID.duration) kept.push(header.subarray(p, fieldEnd));
      p = fieldEnd;
    }
    const duration = Buffer.alloc(11);
    idBytes(ID.duration).copy(duration, 0);
    duration[2] = 0x88; // size 8
    duration.writeDoubleBE((durationMs * 1_000_000) / scale, 3);
    const data = Buffer.concat([...kept, duration]);
    const info = Buffer.concat([idBytes(ID.info), size8(data.length), data]);
    let segmentHead = header.subarray(segment.start, segment.dataStart);
    if (segment.size !== UNKNOWN) {
      const grown = segment.size + info.length - (end - child.start);
      segmentHead = Buffer.concat([idBytes(ID.segment), size8(grown)]);
    }
    return Buffer.concat([
      header.subarray(0, segment.start),
      segmentHead,
      header.subarray(segment.dataStart, child.start),
      info,
      header.subarray(end),
    ]);
  }
}
