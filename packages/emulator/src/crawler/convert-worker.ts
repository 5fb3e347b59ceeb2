/** A page-reading worker's own thread: pages in, their links and formats out (docs/decisions.md D30). */
import { parentPort } from 'node:worker_threads';
import { type DerivedFormat, readHtml } from './convert.js';

interface Job {
  id: number;
  html: string | Uint8Array;
  url: string;
  formats: DerivedFormat[];
}

parentPort?.on('message', (job: Job) => {
  try {
    parentPort?.postMessage({ id: job.id, read: readHtml(job.html, job.url, job.formats) });
  } catch (error) {
    parentPort?.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});
