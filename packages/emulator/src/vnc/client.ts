/** A small RFB client over the WebSocket view: the demo uses it to show the view answers. */
import WebSocket from 'ws';
import { vncResponse } from './rfb.js';

/**
 * Open a VNC view, authenticate and read its greeting: the framebuffer size and desktop name.
 * Fails with the server's reason on a wrong password. The socket stays open for what follows;
 * close it when done. The demo uses it to show the view answers.
 */
export async function openVncView(
  url: string,
  password: string,
  timeoutMs = 10_000,
  options: { /** Ask for security type None (a client in `hitl_allowed_networks`). */ none?: boolean } = {},
): Promise<{ width: number; height: number; name: string; socket: WebSocket }> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  let input: Buffer = Buffer.alloc(0);
  let wake = () => {};
  let failure: Error | undefined;
  const onMessage = (d: Buffer) => {
    input = Buffer.concat([input, d]);
    wake();
  };
  const stop = (e: Error) => {
    failure ??= e;
    wake();
  };
  const onClose = (_code: number, reason: Buffer) =>
    stop(new Error(`the VNC view closed: ${reason.toString() || 'no reason'}`));
  ws.on('message', onMessage);
  ws.on('error', stop);
  ws.on('close', onClose);
  const timer = setTimeout(() => stop(new Error(`the VNC view did not answer within ${timeoutMs} ms`)), timeoutMs);
  const read = async (n: number): Promise<Buffer> => {
    while (input.length < n) {
      if (failure) throw failure;
      await new Promise<void>((r) => {
        wake = r;
      });
    }
    const out = input.subarray(0, n);
    input = input.subarray(n);
    return out;
  };
  try {
    if ((await read(12)).toString('latin1') !== 'RFB 003.008\n') throw new Error('not an RFB 3.8 server');
    ws.send(Buffer.from('RFB 003.008\n', 'latin1'));
    const types = await read((await read(1))[0] as number);
    if (options.none) {
      if (!types.includes(1)) throw new Error('the view does not let this client in without a password');
      ws.send(Buffer.from([1]));
    } else {
      if (!types.includes(2)) throw new Error('the view does not offer VNC authentication');
      ws.send(Buffer.from([2]));
      ws.send(vncResponse(password, await read(16)));
    }
    if ((await read(4)).readUInt32BE(0) !== 0) {
      throw new Error(`VNC authentication failed: ${(await read((await read(4)).readUInt32BE(0))).toString()}`);
    }
    ws.send(Buffer.from([1]));
    const init = await read(24);
    const name = (await read(init.readUInt32BE(20))).toString('utf8');
    return { width: init.readUInt16BE(0), height: init.readUInt16BE(2), name, socket: ws };
  } catch (error) {
    ws.close();
    throw error;
  } finally {
    clearTimeout(timer);
    ws.off('message', onMessage);
    ws.off('close', onClose);
  }
}
