/**
 * Where a crawl keeps its pages' bodies and formats (docs/decisions.md D30): one file of the
 * crawl's own, appended to as pages are kept, read back by range. A crawl's memory then holds
 * its records, not its pages' bytes; the file goes with the emulator (or with its process).
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { folderPrefix, watchFolder } from '../reaper.js';

/** A body kept in the crawl's file: where it starts and how many bytes it has. */
export interface BodyRef {
  at: number;
  length: number;
}

/** Bodies gathered before they are written: one write for many pages, not one for each. */
const PENDING_BYTES = 1 << 20;

/** One crawl's file of bodies. */
export class PageBodies {
  #fd: number | undefined;
  #dir: string | undefined;
  #unwatch: (() => void) | undefined;
  #size = 0;
  /** Bytes kept but not written yet: those from `#written` to `#size`. */
  #pending: Buffer | undefined;
  #written = 0;

  /** Keep `text` (or its UTF-8 bytes); returns where it is. */
  put(text: string | Uint8Array): BodyRef {
    const length = typeof text === 'string' ? Buffer.byteLength(text, 'utf8') : text.length;
    const ref = { at: this.#size, length };
    if (this.#size - this.#written + length > PENDING_BYTES) this.#flush();
    if (length > PENDING_BYTES) {
      this.#write(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
    } else {
      this.#pending ??= Buffer.allocUnsafe(PENDING_BYTES);
      const offset = this.#size - this.#written;
      if (typeof text === 'string') this.#pending.write(text, offset, 'utf8');
      else this.#pending.set(text, offset);
    }
    this.#size += length;
    return ref;
  }

  /** A body kept earlier. */
  get(ref: BodyRef): string {
    if (this.#fd === undefined && this.#pending === undefined)
      throw new Error("the crawl's pages are no longer kept (the emulator closed)");
    if (ref.at >= this.#written && this.#pending)
      return this.#pending.toString('utf8', ref.at - this.#written, ref.at - this.#written + ref.length);
    const fd = this.#fd as number;
    const bytes = Buffer.allocUnsafe(ref.length);
    let read = 0;
    while (read < ref.length) {
      const n = readSync(fd, bytes, read, ref.length - read, ref.at + read);
      if (n === 0) break;
      read += n;
    }
    return bytes.toString('utf8', 0, read);
  }

  /** How many bytes the crawl keeps on disk. */
  get size(): number {
    return this.#size;
  }

  /** Remove the file. */
  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
    this.#pending = undefined;
    this.#written = this.#size;
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true });
    this.#unwatch?.();
  }

  /** In a snapshot of the crawl's records: where the bodies are, not the bodies. */
  toJSON(): string {
    return `(${this.#size} bytes of page bodies on disk)`;
  }

  /** Write what is pending, and let its buffer go (a crawl that has ended keeps none). */
  settle(): void {
    this.#flush();
    this.#pending = undefined;
  }

  #flush(): void {
    if (this.#pending && this.#size > this.#written) {
      const length = this.#size - this.#written;
      this.#write(this.#pending.subarray(0, length), this.#written);
      this.#written += length;
    }
  }

  /** Write `bytes` at `at` (the pending ones' place), or, at the end, past them all. */
  #write(bytes: Uint8Array, at = this.#size): void {
    const fd = this.#open();
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written, at + written);
    if (at === this.#size) this.#written = at + bytes.length;
  }

  #open(): number {
    if (this.#fd === undefined) {
      this.#dir = mkdtempSync(folderPrefix('crawl'));
      this.#unwatch = watchFolder(this.#dir);
      this.#fd = openSync(join(this.#dir, 'bodies'), 'w+');
    }
    return this.#fd;
  }
}
