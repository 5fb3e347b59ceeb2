/**
 * Session recordings (docs/decisions.md D23), encoded by the emulator's own Chromium: a page draws the session's
 * screencast frames on a canvas and `MediaRecorder` turns the canvas into a VP8 WebM. Nothing is
 * downloaded and no encoder ships with the package: Chromium has libvpx already. Memory stays
 * flat: only the newest frame waits to be drawn, and the encoded chunks go to a file each second.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { CdpClient } from '../cdp.js';
import { type LaunchedChromium, launchChromium } from '../chromium.js';
import type { Frame } from '../vnc/tight.js';
import { withDuration } from './webm.js';

/** The least a recording lasts, so that the encoder gives at least one chunk. */
const MIN_RECORDING_MS = 1000;

/** Frames a second the canvas is painted (the newest picture, again if nothing changed). */
const FPS = 10;
/** How often the encoder hands its output over, ms. */
const TIMESLICE = 1000;

/** What a finished recording holds. */
export interface RecordingMetadata {
  duration_ms: number;
  width: number;
  height: number;
  /** Screencast frames drawn (a page that does not change sends none). */
  frames: number;
}

// Runs in the recorder's page: a canvas of the session's size, painted FPS times a second with
// the newest frame, recorded in TIMESLICE chunks handed to Node through two bindings.
const PAGE_SCRIPT = (width: number, height: number) => `(() => {
  const canvas = document.createElement('canvas');
  canvas.width = ${width};
  canvas.height = ${height};
  document.body.append(canvas);
  const g = canvas.getContext('2d');
  g.fillStyle = '#fff';
  g.fillRect(0, 0, ${width}, ${height});
  let last = null;
  const paint = () => { if (last) g.drawImage(last, 0, 0, ${width}, ${height}); else g.fillRect(0, 0, 1, 1); };
  const type = ['video/webm;codecs=vp8', 'video/webm;codecs=vp9', 'video/webm'].find((t) => MediaRecorder.isTypeSupported(t));
  const recorder = new MediaRecorder(canvas.captureStream(${FPS}), { mimeType: type, videoBitsPerSecond: 2500000 });
  let queue = Promise.resolve();
  const read = (blob) => new Promise((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).slice(String(reader.result).indexOf(',') + 1));
    reader.readAsDataURL(blob);
  });
  recorder.ondataavailable = (e) => {
    if (e.data.size > 0) queue = queue.then(async () => __recorderChunk(await read(e.data)));
  };
  let started = 0;
  recorder.onstop = () => {
    const duration = performance.now() - started;
    queue = queue.then(() => __recorderDone(JSON.stringify({ duration })));
  };
  window.__draw = async (b64) => {
    const blob = await (await fetch('data:image/jpeg;base64,' + b64)).blob();
    last = await createImageBitmap(blob);
    paint();
  };
  window.__stop = () => { clearInterval(timer); paint(); recorder.stop(); };
  paint();
  const timer = setInterval(paint, ${Math.round(1000 / FPS)});
  recorder.start(${TIMESLICE});
  started = performance.now();
  return type;
})()`;

/** The Chromium that encodes every recording of an emulator, started with the first one. */
export class RecorderBrowser {
  private started: Promise<{ chromium: LaunchedChromium; control: CdpClient }> | undefined;

  constructor(private readonly executable: string) {}

  private start() {
    this.started ??= (async () => {
      // A recording page must be painted on time even though nobody looks at it.
      const chromium = await launchChromium(this.executable, [
        '--disable-background-timer-throttling',
        '--disable-renderer-backgrounding',
        '--disable-backgrounding-occluded-windows',
      ]);
      const control = CdpClient.open(chromium.pipe);
      return { chromium, control };
    })();
    return this.started;
  }

  /** Start recording into `file` at `width` x `height`. */
  async record(file: string, width: number, height: number): Promise<Recording> {
    const { control } = await this.start();
    const { targetId } = await control.send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await control.send<{ sessionId: string }>('Target.attachToTarget', {
      targetId,
      flatten: true,
    });
    const recording = new Recording(control, sessionId, targetId, file, width, height);
    await recording.begin();
    return recording;
  }

  async close(): Promise<void> {
    const started = await this.started?.catch(() => undefined);
    started?.control.close();
    await started?.chromium.kill();
  }
}

/** One session's recording, from its first frame to its file. */
export class Recording {
  private readonly out: WriteStream;
  private header: Buffer | undefined;
  private frames = 0;
  private drawing = false;
  private next: Frame | undefined;
  /** The newest picture drawn, and when the first was: a short session is held to MIN_RECORDING_MS. */
  private last: Frame | undefined;
  private firstDrawnAt: number | undefined;
  private done: ((duration: number) => void) | undefined;
  private readonly finished: Promise<number>;
  private stopped = false;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly control: CdpClient,
    private readonly sessionId: string,
    private readonly targetId: string,
    private readonly file: string,
    readonly width: number,
    readonly height: number,
  ) {
    this.out = createWriteStream(`${file}.part`);
    this.finished = new Promise((resolve) => {
      this.done = resolve;
    });
  }

  /** Install the page's canvas and encoder. */
  async begin(): Promise<void> {
    const { control, sessionId } = this;
    this.unsubscribe = control.on('Runtime.bindingCalled', (params, from) => {
      if (from !== sessionId) return;
      if (params.name === '__recorderChunk') this.chunk(Buffer.from(params.payload as string, 'base64'));
      else if (params.name === '__recorderDone') {
        this.done?.((JSON.parse(params.payload as string) as { duration: number }).duration);
      }
    });
    await control.send('Runtime.enable', {}, sessionId);
    await control.send('Runtime.addBinding', { name: '__recorderChunk' }, sessionId);
    await control.send('Runtime.addBinding', { name: '__recorderDone' }, sessionId);
    const { result, exceptionDetails } = await control.send<{
      result: { value?: string };
      exceptionDetails?: { text: string };
    }>('Runtime.evaluate', { expression: PAGE_SCRIPT(this.width, this.height), returnByValue: true }, sessionId);
    if (exceptionDetails || !result.value) {
      throw new Error(`the recorder could not start: ${exceptionDetails?.text ?? 'no WebM encoder'}`);
    }
  }

  /** A new picture of the session: drawn when the previous one is; older pending ones are dropped. */
  frame(frame: Frame): void {
    if (this.stopped) return;
    this.next = frame;
    if (!this.drawing) void this.draw();
  }

  private async draw(): Promise<void> {
    this.drawing = true;
    while (this.next && !this.stopped) {
      const frame = this.next;
      this.next = undefined;
      await this.control
        .send(
          'Runtime.evaluate',
          { expression: `__draw(${JSON.stringify(frame.jpeg.toString('base64'))})`, awaitPromise: true },
          this.sessionId,
        )
        .then(() => {
          this.frames++;
          this.last = frame;
          this.firstDrawnAt ??= Date.now();
        })
        .catch(() => {});
    }
    this.drawing = false;
  }

  private chunk(bytes: Buffer): void {
    // The first chunk holds the header, whose Info gets the duration at the end: keep it apart.
    if (!this.header) this.header = bytes;
    else this.out.write(bytes);
  }

  /** Stop, and write the finished file (header with its duration, then the rest). */
  async finish(): Promise<RecordingMetadata> {
    // A session shorter than the encoder's first chunk (the recorder's Chromium may have started
    // late, on a busy machine) would leave an empty file: keep showing its last picture until
    // MIN_RECORDING_MS have been recorded.
    while (this.drawing) await new Promise((r) => setTimeout(r, 10));
    while (this.last && this.firstDrawnAt !== undefined && Date.now() - this.firstDrawnAt < MIN_RECORDING_MS) {
      this.frame(this.last);
      await new Promise((r) => setTimeout(r, 100));
    }
    this.stopped = true;
    while (this.drawing) await new Promise((r) => setTimeout(r, 10));
    await this.control.send('Runtime.evaluate', { expression: '__stop()' }, this.sessionId);
    const duration = await this.finished;
    this.unsubscribe?.();
    await new Promise<void>((resolve, reject) => this.out.end((e?: Error | null) => (e ? reject(e) : resolve())));
    await this.control.send('Target.closeTarget', { targetId: this.targetId }).catch(() => {});
    if (!this.header) throw new Error('the recorder wrote nothing');
    const durationMs = Math.round(duration);
    const header = withDuration(this.header, durationMs) ?? this.header;
    const target = await open(this.file, 'w');
    try {
      await target.write(header);
      const body = await open(`${this.file}.part`, 'r');
      try {
        const buffer = Buffer.alloc(1 << 20);
        for (;;) {
          const { bytesRead } = await body.read(buffer, 0, buffer.length);
          if (bytesRead === 0) break;
          await target.write(buffer.subarray(0, bytesRead));
        }
      } finally {
        await body.close();
      }
    } finally {
      await target.close();
      await rm(`${this.file}.part`, { force: true });
    }
    return { duration_ms: durationMs, width: this.width, height: this.height, frames: this.frames };
  }

  /** Give up: no file. */
  async abandon(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.out.destroy();
    await this.control.send('Target.closeTarget', { targetId: this.targetId }).catch(() => {});
    await rm(`${this.file}.part`, { force: true });
  }
}
