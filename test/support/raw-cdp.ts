/** A bare CDP client over a WebSocket to the emulator: no library and no connector between, as any other client would be. */
import WebSocket from 'ws';

export interface RawCdp {
  send<T = Record<string, unknown>>(method: string, params?: object, sessionId?: string): Promise<T>;
  events: { method: string; params: Record<string, unknown>; sessionId?: string }[];
  /** A new page, attached (flat): its session id. */
  newPage(url: string): Promise<string>;
  close(): Promise<void>;
}

export async function rawCdp(url: string | URL): Promise<RawCdp> {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: never) => void; reject: (e: Error) => void }>();
  const events: RawCdp['events'] = [];
  ws.on('message', (data: Buffer) => {
    const m = JSON.parse(data.toString('utf8'));
    if (m.id !== undefined) {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) p?.reject(new Error(m.error.message));
      else p?.resolve(m.result as never);
    } else events.push(m);
  });
  const send: RawCdp['send'] = (method, params = {}, sessionId) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: never) => void, reject });
      ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  return {
    send,
    events,
    async newPage(address) {
      const { targetId } = await send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
      await send('Page.enable', {}, sessionId);
      const loaded = new Promise<void>((resolve) => {
        const timer = setInterval(() => {
          if (events.some((e) => e.method === 'Page.loadEventFired' && e.sessionId === sessionId)) {
            clearInterval(timer);
            resolve();
          }
        }, 20);
      });
      await send('Page.navigate', { url: address }, sessionId);
      await loaded;
      return sessionId;
    },
    close: () =>
      new Promise((resolve) => {
        ws.once('close', () => resolve());
        ws.close();
      }),
  };
}
