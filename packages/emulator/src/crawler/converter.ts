/**
 * Pages read beside the crawl (docs/decisions.md D30): worker threads (one per core, at most
 * four: the crawl's own thread mostly waits on the network) parse each page once, for its links
 * and the formats the crawl keeps, while the crawl's thread fetches the next ones. A worker that
 * cannot start or fails leaves the reading to the calling thread: slower, never wrong.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { type Converted, DERIVED_FORMATS, type DerivedFormat, readHtml } from './convert.js';
import type { ParsedPage } from './page-reader.js';

/**
 * A page read for a crawl: what the crawl goes on with, and the formats asked for as UTF-8 bytes
 * one after another, in the order of `lengths`: what the crawl's file keeps, and what a worker
 * hands back moved, not copied (no string to clone on the way, nor to encode on the crawl's thread).
 */
export interface KeptRead {
  parsed: ParsedPage;
  formats?: { headings: string[]; bytes: Uint8Array; lengths: [DerivedFormat, number][] } | undefined;
}

/** Read a page (see readHtml) and encode its formats, on whichever thread runs it. */
export function readForCrawl(page: string | Uint8Array, url: string, formats: readonly DerivedFormat[]): KeptRead {
  const { parsed, converted } = readHtml(page, url, formats);
  return converted ? { parsed, formats: encodeFormats(converted) } : { parsed };
}

/** A page's formats as UTF-8 bytes one after another (see KeptRead), with its headings. */
export function encodeFormats(converted: Converted): NonNullable<KeptRead['formats']> {
  const lengths: [DerivedFormat, number][] = [];
  let total = 0;
  for (const f of DERIVED_FORMATS) {
    const text = converted[f];
    if (text === undefined) continue;
    const length = Buffer.byteLength(text, 'utf8');
    lengths.push([f, length]);
    total += length;
  }
  // A buffer of its own (not a slice of Node's pool), so that it can be moved to another thread.
  const bytes = Buffer.allocUnsafeSlow(total);
  let at = 0;
  for (const [f, length] of lengths) at += bytes.write(converted[f] ?? '', at, length, 'utf8');
  return { headings: converted.headings, bytes, lengths };
}

/**
 * How to start the worker: the built JavaScript beside this module (a chunk at the package's
 * dist root, beside the worker's entry), or, from the sources, the TypeScript file through tsx
 * (Node 20 runs no loader of the main thread's in a worker).
 */
function workerScript(): { script: string; eval: boolean } | undefined {
  const here = import.meta.url;
  const ext = here.endsWith('.cjs') ? '.cjs' : here.endsWith('.ts') ? '.ts' : '.js';
  const url = new URL(`./convert-worker${ext}`, here);
  if (!existsSync(fileURLToPath(url))) return undefined;
  if (ext !== '.ts') return { script: fileURLToPath(url), eval: false };
  const load = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); })`;
  return { script: load, eval: true };
}

/** One of a read's formats, as text; undefined when it was not asked for. */
export function formatOf(read: KeptRead, format: DerivedFormat): string | undefined {
  const { bytes, lengths = [] } = read.formats ?? {};
  let at = 0;
  for (const [f, length] of lengths) {
    if (f === format && bytes) return Buffer.from(bytes.buffer, bytes.byteOffset + at, length).toString('utf8');
    at += length;
  }
  return undefined;
}

interface Pending {
  resolve: (c: KeptRead) => void;
  reject: (e: Error) => void;
}

class ConvertWorker {
  readonly worker: Worker;
  readonly pending = new Map<number, Pending>();

  /** `exited`: the worker has exited (a failure to start, or a crash). */
  constructor(where: { script: string; eval: boolean }, exited: () => void) {
    this.worker = new Worker(where.script, { eval: where.eval });
    this.worker.on('message', (m: { id: number; read?: KeptRead; error?: string }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if (m.read) p?.resolve(m.read);
      else p?.reject(new Error(m.error ?? 'conversion failed'));
    });
    this.worker.on('error', (e) => this.failAll(e));
    this.worker.on('exit', () => {
      exited();
      this.failAll(new Error('the conversion worker exited'));
    });
    // After the listeners: Node refs a worker's port again when its first 'message' listener is
    // added, and an idle worker so refed kept the process from exiting (the demo hung on a worker
    // that never got a page).
    this.worker.unref();
  }

  private failAll(error: Error): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}

let next = 0;

/** The conversion workers of the process, started on first use. */
export class Converter {
  private workers: ConvertWorker[] | undefined;
  private broken = false;

  /**
   * `html` read (links, and the `formats` asked for), on a worker when one runs, else here. Bytes
   * (UTF-8) are copied once and handed over, not serialized as a string would be.
   */
  async read(html: string | Uint8Array, url: string, formats: readonly DerivedFormat[]): Promise<KeptRead> {
    const worker = this.pick();
    if (!worker) return readForCrawl(html, url, formats);
    const id = ++next;
    try {
      return await new Promise<KeptRead>((resolve, reject) => {
        worker.pending.set(id, { resolve, reject });
        worker.worker.ref();
        if (typeof html === 'string') worker.worker.postMessage({ id, html, url, formats });
        else {
          const bytes = new Uint8Array(html);
          worker.worker.postMessage({ id, html: bytes, url, formats }, [bytes.buffer]);
        }
      });
    } catch {
      return readForCrawl(html, url, formats);
    }
  }

  /** How many worker threads read pages: 0 before the first page, or when none runs (reading here). */
  get threads(): number {
    return this.broken ? 0 : (this.workers?.length ?? 0);
  }

  private pick(): ConvertWorker | undefined {
    if (this.broken) return undefined;
    if (!this.workers) {
      const where = workerScript();
      const count = Math.max(1, Math.min(4, availableParallelism()));
      // A worker that exits is not started again: the rest of the process reads on its own thread.
      const exited = () => {
        this.broken = true;
      };
      try {
        this.workers = where ? Array.from({ length: count }, () => new ConvertWorker(where, exited)) : [];
      } catch {
        this.workers = [];
      }
      if (this.workers.length === 0) this.broken = true;
    }
    return this.workers.reduce<ConvertWorker | undefined>(
      (best, w) => (!best || w.pending.size < best.pending.size ? w : best),
      undefined,
    );
  }
}

/** The process's converter, shared by every crawl. */
export const converter = new Converter();
