/** Finding and starting a local Chromium for the emulator's sessions. */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudBrowserError } from '../errors.js';

/** Where a system Chromium or Chrome usually lives. */
const SYSTEM_BROWSERS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/opt/google/chrome/chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];

/** No browser could be found or started. */
export class BrowserLaunchError extends CloudBrowserError {}
Object.defineProperty(BrowserLaunchError.prototype, 'name', { value: 'BrowserLaunchError', writable: true });

/**
 * The browser to run: `explicit`, then `CHROME_PATH`, then the system's Chromium or Chrome,
 * then the `@sparticuz/chromium` package (which ships a Chromium inside its npm tarball).
 *
 * @example
 * const executablePath = await findChromium() // e.g. for Playwright's chromium.launch({ executablePath })
 */
export async function findChromium(explicit?: string): Promise<string> {
  const chosen = explicit ?? process.env.CHROME_PATH;
  if (chosen) {
    if (!existsSync(chosen)) {
      throw new BrowserLaunchError(
        `no browser at ${chosen} (from ${explicit ? 'chromiumPath' : 'CHROME_PATH'}): fix the path or unset it`,
      );
    }
    return chosen;
  }
  const system = SYSTEM_BROWSERS.find((p) => existsSync(p));
  if (system) return system;
  try {
    const name = '@sparticuz/chromium';
    const mod = (await import(name)) as { default: { executablePath(): Promise<string> } };
    return await mod.default.executablePath();
  } catch (error) {
    throw new BrowserLaunchError(
      'no Chromium found: set CHROME_PATH, install Chromium or Chrome, or `npm install @sparticuz/chromium`',
      { cause: error },
    );
  }
}

/** Flags that keep a local Chromium headless and off the network. */
export const BASE_FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--disable-features=Translate,OptimizationHints,MediaRouter',
  '--remote-debugging-address=127.0.0.1',
  '--remote-debugging-port=0',
];

/** A running Chromium. */
export interface LaunchedChromium {
  /** Its browser-level CDP WebSocket. */
  readonly wsEndpoint: string;
  readonly pid: number;
  /** Its profile folder, removed when it exits. */
  readonly userDataDir: string;
  /** Resolves when the process has exited and its profile is removed. */
  readonly exited: Promise<void>;
  /** Kill the process group and wait for the exit. */
  kill(): Promise<void>;
}

/** Start Chromium with `args` (besides {@link BASE_FLAGS}) and wait for its DevTools endpoint. */
export async function launchChromium(
  executable: string,
  args: readonly string[],
  startUrl = 'about:blank',
): Promise<LaunchedChromium> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'cloud-browser-emulator-'));
  const child: ChildProcess = spawn(executable, [...BASE_FLAGS, `--user-data-dir=${userDataDir}`, ...args, startUrl], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      void rm(userDataDir, { recursive: true, force: true, maxRetries: 3 }).finally(resolve);
    });
    child.once('error', () => resolve());
  });
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }
    await exited;
  };
  try {
    const wsEndpoint = await new Promise<string>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(
        () => reject(new BrowserLaunchError(`Chromium did not start within 30 s: ${text.slice(-500)}`)),
        30_000,
      );
      child.stderr?.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const match = /DevTools listening on (ws:\/\/\S+)/.exec(text);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new BrowserLaunchError(`could not start ${executable}: ${error.message}`, { cause: error }));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new BrowserLaunchError(`Chromium exited with code ${code} before it was ready: ${text.slice(-500)}`));
      });
    });
    child.stderr?.resume();
    return { wsEndpoint, pid: child.pid ?? -1, userDataDir, exited, kill };
  } catch (error) {
    await kill();
    throw error;
  }
}
