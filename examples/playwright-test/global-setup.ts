/** Starts the emulator and a local site unless the environment names a real service. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startEmulator } from 'cloud-browser-emulator';

export default async function globalSetup(): Promise<() => Promise<void>> {
  const site = createServer((req, res) => {
    if (req.url === '/receipt.txt') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="receipt.txt"' });
      res.end('Receipt: 1 example, 300 dollars\n');
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<title>Example shop</title><button>Buy</button> <a href="/receipt.txt">Receipt</a>');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  process.env.SITE_URL = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;

  const emulator = process.env.CLOUD_BROWSER_URL ? undefined : await startEmulator();
  if (emulator) {
    process.env.CLOUD_BROWSER_URL = emulator.browserUrl;
    process.env.CLOUD_API_KEY = emulator.apiKey;
  }
  return async () => {
    await emulator?.close();
    site.close();
  };
}
