/** The VNC view's WebSocket front door (`/run/<run_id>/vnc`, as noVNC speaks it). */
import WebSocket from 'ws';
import { RfbConnection, type RfbSecurity } from './connection.js';

/** Serve one viewer over `ws`; closes it on a protocol error or a wrong password. */
export function serveVncWebSocket(ws: WebSocket, security: RfbSecurity): RfbConnection {
  const connection = new RfbConnection(
    {
      send: (data) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(data);
      },
      close: (reason, refused) => ws.close(refused ? 1000 : 1002, reason.slice(0, 120)),
    },
    security,
  );
  ws.on('message', (data: Buffer) => connection.receive(data));
  ws.on('close', () => connection.ended());
  ws.on('error', () => {});
  return connection;
}
