/**
 * `cloud-browser-emulator/command`: the bodies of the `cloud-browser emulator` and
 * `cloud-browser demo` commands, which the `cloud-browser` command loads when they run.
 */
import { interrupted } from 'cloud-browser/internal';
import { startEmulator } from './server.js';

export { runDemo } from './demo.js';

/** The `emulator` command's flags, as the command parsed them. */
export interface ServeOptions {
  port: string;
  host: string;
  chromium?: string | undefined;
  apiKey?: string | undefined;
}

/**
 * Serve the emulator until Ctrl-C, SIGTERM or SIGHUP, printing the environment a client needs.
 *
 * @example
 * await serveEmulator({ port: '0', host: '127.0.0.1' });
 */
export async function serveEmulator(opts: ServeOptions): Promise<void> {
  const emulator = await startEmulator({
    port: Number(opts.port),
    host: opts.host,
    chromiumPath: opts.chromium,
    ...(opts.apiKey ? { apiKeys: [opts.apiKey] } : {}),
  });
  process.stdout.write(
    `emulator ready\nCLOUD_BROWSER_URL=${emulator.browserUrl}\nCLOUD_API_URL=${emulator.apiUrl}\nCLOUD_API_KEY=${emulator.apiKey}\ndashboard: ${emulator.dashboardUrl}\nnative VNC port: ${emulator.vncPort}\n(Ctrl-C to stop)\n`,
  );
  await interrupted();
  await emulator.close();
  process.stdout.write('emulator stopped\n');
}
