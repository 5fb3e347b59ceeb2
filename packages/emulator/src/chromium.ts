/** Finding and starting a local Chromium for the emulator's sessions. */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { CloudBrowserError } from 'cloud-browser';
import { CdpPipe } from './cdp-pipe.js';
import { folderPrefix, killGroup, watchFolder, watchProcess } from './reaper.js';

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
  // No back-forward cache, as Playwright launches Chromium: a page restored from it fires no load
  // events, and a client's goBack would wait for them.
  '--disable-features=Translate,OptimizationHints,MediaRouter,BackForwardCache',
  // Every site in a process of its own, as desktop Chrome does (a headless shell may not):
  // frames of other sites are out of process whatever the browser found.
  '--site-per-process',
  // navigator.webdriver false, as in a browser a person runs (the service's never says true).
  '--disable-blink-features=AutomationControlled',
  // Chromium's own WebMCP where it has it (156 and later); older ones get the emulator's
  // (docs/decisions.md D31).
  '--enable-features=WebMCPTesting',
];

/** A running Chromium. */
export interface LaunchedChromium {
  /** Its DevTools, over the pipe only the emulator holds (no port on loopback). */
  readonly pipe: CdpPipe;
  readonly pid: number;
  /** Its profile folder, removed when it exits. */
  readonly userDataDir: string;
  /** Resolves when the process has exited and its profile is removed. */
  readonly exited: Promise<void>;
  /** Whether the process has exited already. */
  hasExited(): boolean;
  /** Kill the process group and wait for the exit. */
  kill(): Promise<void>;
}

/** Start Chromium with `args` (besides {@link BASE_FLAGS}), its DevTools on a pipe only we hold. */
export async function launchChromium(
  executable: string,
  args: readonly string[],
  startUrl = 'about:blank',
): Promise<LaunchedChromium> {
  const userDataDir = await mkdtemp(folderPrefix('emulator'));
  const unwatchFolder = watchFolder(userDataDir);
  // fd 3: the browser reads DevTools commands; fd 4: it writes answers and events.
  const child: ChildProcess = spawn(
    executable,
    [...BASE_FLAGS, '--remote-debugging-pipe', `--user-data-dir=${userDataDir}`, ...args, startUrl],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true },
  );
  const unwatchProcess = child.pid === undefined ? () => {} : watchProcess(child.pid);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-2000);
  });
  const exited = new Promise<void>((resolve) => {
    const gone = () => {
      unwatchProcess();
      void rm(userDataDir, { recursive: true, force: true, maxRetries: 3 })
        .catch(() => {})
        .finally(() => {
          unwatchFolder();
          resolve();
        });
    };
    child.once('exit', gone);
    child.once('error', gone);
  });
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) killGroup(child.pid);
    await exited;
  };
  try {
    const pipe = new CdpPipe(child.stdio[3] as Writable, child.stdio[4] as Readable);
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (error) =>
        reject(new BrowserLaunchError(`could not start ${executable}: ${error.message}`, { cause: error })),
      );
      child.once('exit', (code) =>
        reject(new BrowserLaunchError(`Chromium exited with code ${code} before it was ready: ${stderr.slice(-500)}`)),
      );
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new BrowserLaunchError(`Chromium did not start within 30 s: ${stderr.slice(-500)}`)),
        30_000,
      );
    });
    try {
      await Promise.race([pipe.ready(), failed, late]);
    } finally {
      clearTimeout(timer);
      failed.catch(() => {});
    }
    const hasExited = () => child.exitCode !== null || child.signalCode !== null;
    return { pipe, pid: child.pid ?? -1, userDataDir, exited, hasExited, kill };
  } catch (error) {
    await kill();
    throw error;
  }
}
