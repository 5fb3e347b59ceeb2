/** Pages for the service protocol's tests: one that logs every input event it receives, with targets in frames. */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Every input event the page (or a frame) sees, as `window.log`. */
export const LOGGER = `<script>
window.log = [];
for (const type of ['mousemove', 'pointermove', 'mousedown', 'mouseup', 'click', 'dblclick', 'contextmenu', 'keydown', 'keypress', 'input', 'keyup', 'wheel', 'change'])
  addEventListener(type, (e) => log.push({ type, t: e.timeStamp, x: e.clientX, y: e.clientY, key: e.key, target: e.target.id || e.target.nodeName, trusted: e.isTrusted, buttons: e.buttons }), true);
</script>`;

export interface ServiceSite {
  url: string;
  /** The same server on another loopback address: another site, so its frames are out of process. */
  otherUrl: string;
  pages: Map<string, { type: string; body: string | Buffer; headers?: Record<string, string> }>;
  close(): Promise<void>;
}

/** Serve `pages` on 127.0.0.1 and 127.0.0.2 (the same paths on both). */
export async function startServiceSite(
  pages: Record<string, string | { type: string; body: string | Buffer; headers?: Record<string, string> }>,
): Promise<ServiceSite> {
  const map = new Map(
    Object.entries(pages).map(([k, v]) => [k, typeof v === 'string' ? { type: 'text/html', body: v } : v]),
  );
  const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const page = map.get(new URL(req.url ?? '/', 'http://x').pathname);
    if (!page) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': page.type, ...page.headers }).end(page.body);
  };
  const one = createServer(handler);
  one.listen(0, '127.0.0.1');
  await once(one, 'listening');
  const port = (one.address() as AddressInfo).port;
  const two: Server = createServer(handler);
  two.listen(port, '127.0.0.2');
  await once(two, 'listening');
  return {
    url: `http://127.0.0.1:${port}`,
    otherUrl: `http://127.0.0.2:${port}`,
    pages: map,
    close: async () => {
      one.closeAllConnections();
      two.closeAllConnections();
      await Promise.all([new Promise((r) => one.close(r)), new Promise((r) => two.close(r))]);
    },
  };
}
