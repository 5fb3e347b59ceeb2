/** A small CDP client for the emulator's own control connection to each Chromium. */
import type { CdpChannel, CdpPipe } from './cdp-pipe.js';

type Handler = (params: Record<string, unknown>, sessionId: string | undefined) => void;

/** One browser-level CDP client (flat sessions), on its own channel of the browser's pipe. */
export class CdpClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly handlers = new Map<string, Set<Handler>>();

  private constructor(private readonly channel: CdpChannel) {
    channel.onmessage = (data: Buffer) => {
      const msg = JSON.parse(data.toString('utf8')) as {
        id?: number;
        method?: string;
        params?: Record<string, unknown>;
        result?: unknown;
        error?: { message: string };
        sessionId?: string;
      };
      if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(msg.error.message));
        else p?.resolve(msg.result);
      } else if (msg.method) {
        for (const h of this.handlers.get(msg.method) ?? []) h(msg.params ?? {}, msg.sessionId);
      }
    };
    channel.onclose = () => {
      for (const p of this.pending.values()) p.reject(new Error('CDP connection closed'));
      this.pending.clear();
    };
  }

  /** A client of its own on the browser's pipe. */
  static open(pipe: CdpPipe): CdpClient {
    return new CdpClient(pipe.open());
  }

  /** Call a CDP method (on a flat session when `sessionId` is given). */
  send<T = unknown>(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      if (this.channel.closed) {
        reject(new Error('CDP connection closed'));
        return;
      }
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.channel.send(JSON.stringify(sessionId ? { id, method, params, sessionId } : { id, method, params }));
    });
  }

  /** Listen to a CDP event; returns a way to stop listening. */
  on(method: string, handler: Handler): () => void {
    const set = this.handlers.get(method) ?? new Set<Handler>();
    this.handlers.set(method, set);
    set.add(handler);
    return () => set.delete(handler);
  }

  close(): void {
    this.channel.close();
  }
}
