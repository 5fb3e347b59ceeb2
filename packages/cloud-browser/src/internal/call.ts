/** One attempt of a request to the service, timed while the client waits on it. */
import { TimeoutError } from '../errors.js';

/**
 * One attempt of a request: its own abort controller, which the caller's signal and a timer
 * abort. The timer runs while the client waits on the service: until an answer has arrived
 * and been read whole, or, for a stream, while a read of the next chunk is pending, so a long
 * artifact download or answer only fails when the service goes quiet for `timeout` ms.
 */
export class Call {
  readonly #controller = new AbortController();
  readonly signal = this.#controller.signal;
  timedOut = false;
  #timer: NodeJS.Timeout | undefined;
  #streaming = false;
  readonly #onAbort = () => this.#controller.abort(this.caller?.reason);

  constructor(
    private readonly method: string,
    private readonly path: string,
    private readonly ms: number,
    private readonly caller: AbortSignal | undefined,
  ) {
    caller?.addEventListener('abort', this.#onAbort, { once: true });
    this.#arm('did not answer');
  }

  #arm(what: string) {
    this.#timer = setTimeout(() => {
      this.timedOut = true;
      this.#controller.abort(new TimeoutError(`${this.method} ${this.path} ${what} within ${this.ms} ms`));
    }, this.ms);
  }

  #disarm() {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The whole body, read while the timer runs, as a response of its own. */
  async read(res: Response): Promise<Response> {
    const bytes = await res.arrayBuffer();
    const empty = res.status === 204 || res.status === 205 || res.status === 304;
    return new Response(empty ? null : bytes, { status: res.status, statusText: res.statusText, headers: res.headers });
  }

  /** The body as a stream whose reads are timed one by one; the attempt ends with the stream. */
  stream(res: Response): Response {
    this.#streaming = true;
    this.#disarm();
    const reader = (res.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() })).getReader();
    const end = () => {
      this.#disarm();
      this.caller?.removeEventListener('abort', this.#onAbort);
    };
    const body = new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          this.#arm('sent nothing');
          let chunk: ReadableStreamReadResult<Uint8Array>;
          try {
            chunk = await reader.read();
          } catch (error) {
            end();
            throw error;
          }
          this.#disarm();
          if (chunk.done) {
            end();
            controller.close();
          } else controller.enqueue(chunk.value);
        },
        cancel: (reason) => {
          end();
          this.#controller.abort(reason);
          return reader.cancel(reason).catch(() => {});
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  }

  /** The attempt is over, unless its body streams on. */
  settle() {
    if (this.#streaming) return;
    this.#disarm();
    this.caller?.removeEventListener('abort', this.#onAbort);
  }
}
