/** The emulator's runs and their recordings (docs/decisions.md D23): what `/run/{run_id}/playback` and `/video` answer. */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Frame } from '../vnc/tight.js';
import { RecorderBrowser, type Recording, type RecordingMetadata } from './recorder.js';

/** How long a client should wait before asking again while a recording is not ready, ms. */
export const RETRY_AFTER_MS = 500;

/** What a run needs to be recorded. */
export interface RecordedSession {
  readonly runId: string;
  /** The session's `resolution`, when it was given. */
  readonly size: { width: number; height: number } | undefined;
  /** Receive every picture the session shows; returns a way to stop. */
  watch(viewer: (frame: Frame) => void): () => void;
}

type Status = 'uploading' | 'ready' | 'unavailable' | 'disabled';

interface Run {
  key: string;
  status: Status;
  /** Set while the session is live: stop watching it, and give the recording if one started. */
  stop?: (() => Promise<Recording | undefined>) | undefined;
  file?: string;
  metadata?: RecordingMetadata;
  error?: string;
}

/** The docs/decisions.md D23 answer of `GET /run/{run_id}/playback`. */
export interface Playback {
  available: boolean;
  status: Status;
  metadata: RecordingMetadata | null;
  video_url: string | null;
  retry_after_ms: number | null;
}

export class RecordingStore {
  private readonly runs = new Map<string, Run>();
  private readonly browser: RecorderBrowser;
  private dir: Promise<string> | undefined;

  constructor(executable: string) {
    this.browser = new RecorderBrowser(executable);
  }

  /** A session started: record it when `debug` is set, else remember that it was not. */
  begin(session: RecordedSession, key: string, debug: boolean): void {
    if (!debug) {
      this.runs.set(session.runId, { key, status: 'disabled' });
      return;
    }
    const run: Run = { key, status: 'uploading' };
    this.runs.set(session.runId, run);
    let pending: Frame | undefined;
    let recording: Recording | undefined;
    let starting: Promise<Recording | undefined> | undefined;
    const start = (size: { width: number; height: number }) => {
      starting ??= (async () => {
        this.dir ??= mkdtemp(join(tmpdir(), 'cloud-browser-recordings-'));
        const file = join(await this.dir, `${session.runId}.webm`);
        recording = await this.browser.record(file, size.width, size.height);
        run.file = file;
        if (pending) recording.frame(pending);
        pending = undefined;
        return recording;
      })().catch((e: unknown) => {
        run.error = e instanceof Error ? e.message : String(e);
        return undefined;
      });
      return starting;
    };
    // Without a `resolution`, the first picture gives the size.
    const stop = session.watch((frame) => {
      if (recording) recording.frame(frame);
      else {
        pending = frame;
        void start(session.size ?? { width: frame.width, height: frame.height });
      }
    });
    if (session.size) void start(session.size);
    run.stop = () => {
      stop();
      return starting ?? Promise.resolve(undefined);
    };
  }

  /** The session ended: finish its file (the status stays `uploading` until then). */
  end(runId: string): Promise<void> {
    const run = this.runs.get(runId);
    const stop = run?.stop;
    if (!run || !stop) return Promise.resolve();
    run.stop = undefined;
    return stop()
      .then(async (recording) => {
        if (!recording) throw new Error(run.error ?? 'the session showed no page');
        run.metadata = await recording.finish();
        run.status = 'ready';
      })
      .catch((e: unknown) => {
        run.error = e instanceof Error ? e.message : String(e);
        run.status = 'unavailable';
      });
  }

  /** The playback record of a run of `key`, or undefined when there is no such run. */
  playback(key: string, runId: string, videoUrl: string): Playback | undefined {
    const run = this.runs.get(runId);
    if (!run || run.key !== key) return undefined;
    return {
      available: run.status === 'ready',
      status: run.status,
      metadata: run.metadata ?? null,
      video_url: run.status === 'ready' ? videoUrl : null,
      retry_after_ms: run.status === 'uploading' ? RETRY_AFTER_MS : null,
    };
  }

  /** The finished file of a run of `key`, with its size. */
  async video(key: string, runId: string): Promise<{ file: string; size: number } | undefined> {
    const run = this.runs.get(runId);
    if (!run || run.key !== key || run.status !== 'ready' || !run.file) return undefined;
    return { file: run.file, size: (await stat(run.file)).size };
  }

  /** Finished debug runs of `key`, newest last (for the dashboard). */
  list(key?: string): { runId: string; status: Status; metadata: RecordingMetadata | null }[] {
    return [...this.runs]
      .filter(([, r]) => key === undefined || r.key === key)
      .map(([runId, r]) => ({ runId, status: r.status, metadata: r.metadata ?? null }));
  }

  async close(): Promise<void> {
    await Promise.all([...this.runs.keys()].map((id) => this.end(id)));
    await this.browser.close();
    if (this.dir) await rm(await this.dir, { recursive: true, force: true });
  }
}
