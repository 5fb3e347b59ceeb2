/** A prompt answer read as Server-Sent Events (docs/decisions.md D12): sources, tokens, done, errors, keep-alives. */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ConfigError, ConnectionError, isTimeoutError, ServiceError } from '../errors.js';
import { redact } from '../internal/redact.js';
import { type PromptDone, type PromptSource, readToken } from './wire.js';

function parseJson(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

/**
 * A prompt answer: iterate its tokens, or await `text()` for the whole answer. The `source`
 * frames are collected in `sources` as they come, and the final frame in `done`. The answer is
 * asked for once, when iteration starts; it is never asked again (a prompt is billable).
 *
 * @example
 * const answer = crawler.prompt({ crawls: [uuid], prompt: 'What does it cost?' })
 * for await (const token of answer) process.stdout.write(token)
 * console.log(answer.sources.map((s) => s.url), answer.done?.sources_used)
 */
export class PromptStream implements AsyncIterable<string> {
  /** The passages the answer may cite, from the `source` frames received so far. */
  readonly sources: PromptSource[] = [];
  /** The final frame, once the answer is complete. */
  done: PromptDone | undefined;
  #used = false;

  constructor(
    private readonly open: (signal: AbortSignal) => Promise<Response>,
    private readonly signal: AbortSignal | undefined,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<string> {
    if (this.#used)
      throw new ConfigError('prompt stream', [{ option: 'prompt', message: 'a prompt stream can be read once' }]);
    this.#used = true;
    const controller = new AbortController();
    const onAbort = () => controller.abort(this.signal?.reason);
    if (this.signal?.aborted) onAbort();
    this.signal?.addEventListener('abort', onAbort, { once: true });
    // Comments (`: keep-alive`) are dropped by the parser.
    const queue: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (e) => queue.push(e) });
    try {
      const res = await this.open(controller.signal);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const chunk = await this.#read(reader);
        if (chunk.done) {
          // The parser holds a final lone CR in case an LF follows; at the end of the stream
          // nothing will, so end the line (an extra blank line dispatches nothing).
          parser.feed(`${decoder.decode()}\n`);
          parser.reset({ consume: true });
        } else {
          parser.feed(decoder.decode(chunk.value, { stream: true }));
        }
        while (queue.length > 0) {
          const event = queue.shift() as EventSourceMessage;
          if (event.event === 'error') throw ServiceError.generate(parseJson(event.data), { status: 500 });
          if (event.event === 'done') {
            this.done = this.#doneFrame(parseJson(event.data));
            return;
          }
          if (event.event === 'source') this.#source(parseJson(event.data));
          else if (event.event === 'token' || event.event === undefined) yield readToken(event.data);
        }
        if (chunk.done) throw new ConnectionError('the prompt stream ended before its `done` event');
      }
    } finally {
      this.signal?.removeEventListener('abort', onAbort);
      controller.abort();
    }
  }

  async #read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<ReadableStreamReadResult<Uint8Array>> {
    try {
      return await reader.read();
    } catch (error) {
      if (this.signal?.aborted) throw this.signal.reason;
      if (isTimeoutError(error)) throw error;
      throw new ConnectionError(
        `the prompt stream broke: ${redact(error instanceof Error ? error.message : String(error))}`,
        { cause: error },
      );
    }
  }

  #source(value: unknown): void {
    if (typeof value !== 'object' || value === null) return;
    const raw = value as Record<string, unknown>;
    this.sources.push({
      ...raw,
      id: typeof raw.id === 'number' ? raw.id : this.sources.length + 1,
      crawler_uuid: typeof raw.crawler_uuid === 'string' ? raw.crawler_uuid : '',
      url: typeof raw.url === 'string' ? raw.url : '',
      title: typeof raw.title === 'string' ? raw.title : null,
      score: typeof raw.score === 'number' ? raw.score : null,
    });
  }

  #doneFrame(value: unknown): PromptDone {
    const raw = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
    return {
      ...raw,
      sources_used: Array.isArray(raw.sources_used) ? raw.sources_used.filter((n) => typeof n === 'number') : [],
      sources_dropped: typeof raw.sources_dropped === 'number' ? raw.sources_dropped : 0,
      truncated: raw.truncated === true,
    };
  }

  /** The whole answer. */
  async text(): Promise<string> {
    let out = '';
    for await (const token of this) out += token;
    return out;
  }
}
