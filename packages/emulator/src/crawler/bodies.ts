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

/** One crawl's file of bodies. */
export class PageBodies {
  #fd: number | undefined;
  #dir: string | undefined;
  #unwatch: (() => void) | undefined;
  #size = 0;

  /** Keep `text` (or its UTF-8 bytes); returns where it is. */
  put(text: string | Uint8Array): BodyRef {
    const fd = this.#open();
    const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    const ref = { at: this.#size, length: bytes.length };
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written, ref.at + written);
    this.#size += bytes.length;
    return ref;
  }

  /** A body kept earlier. */
  get(ref: BodyRef): string {
    if (this.#fd === undefined) throw new Error("the crawl's pages are no longer kept (the emulator closed)");
    const bytes = Buffer.allocUnsafe(ref.length);
    let read = 0;
    while (read < ref.length) {
      const n = readSync(this.#fd, bytes, read, ref.length - read, ref.at + read);
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
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true });
    this.#unwatch?.();
  }

  /** In a snapshot of the crawl's records: where the bodies are, not the bodies. */
  toJSON(): string {
    return `(${this.#size} bytes of page bodies on disk)`;
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
