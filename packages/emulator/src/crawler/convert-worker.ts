/** A page-reading worker's own thread: pages in, their links and formats out (docs/decisions.md D30). */
import { parentPort } from 'node:worker_threads';
import type { DerivedFormat } from './convert.js';
import { readForCrawl } from './converter.js';

interface Job {
  id: number;
  html: string | Uint8Array;
  url: string;
  formats: DerivedFormat[];
}

parentPort?.on('message', (job: Job) => {
  try {
    const read = readForCrawl(job.html, job.url, job.formats);
    parentPort?.postMessage({ id: job.id, read }, read.formats ? [read.formats.bytes.buffer as ArrayBuffer] : []);
  } catch (error) {
    parentPort?.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});
