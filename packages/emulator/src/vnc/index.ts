export { openVncView } from './client.js';
export { RfbConnection, type RfbSecurity, type RfbTarget, type RfbTransport } from './connection.js';
export { type CdpInput, InputMapper } from './input.js';
export { type ClientMessage, parseClientMessage, vncResponse } from './rfb.js';
export { type PageSessions, Screencast } from './screencast.js';
export { PREFERRED_VNC_PORT, startVncTcpServer, type VncTcpServer } from './tcp.js';
export { type Frame, jpegSize } from './tight.js';
export { serveVncWebSocket } from './websocket.js';
