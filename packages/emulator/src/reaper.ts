/**
 * What the emulator leaves on the machine, taken back when its process ends: on exit, and on
 * SIGINT, SIGTERM and SIGHUP (which otherwise end Node without an exit event). Browsers are
 * killed by process group and their temporary folders removed, synchronously, since nothing
 * asynchronous runs after `exit`. A signal the program does not handle itself then ends the
 * process as it would have without us (the signal raised again); a program that handles it
 * keeps its own behaviour.
 *
 * A process killed with SIGKILL runs none of this: its browsers still end (they read the end of
 * their DevTools pipe), and the next emulator on the machine removes the folders of emulators
 * that are no longer running (their folder names carry their process id).
 */
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

const processes = new Set<number>();
const folders = new Set<string>();
let installed = false;

/** The prefix of this process's temporary folders: `cloud-browser-<kind>-<pid>-`. */
export const folderPrefix = (kind: string) => join(tmpdir(), `cloud-browser-${kind}-${process.pid}-`);

/** Kill the process group `pid` if this process ends first; returns a way to stop watching it. */
export function watchProcess(pid: number): () => void {
  install();
  processes.add(pid);
  return () => processes.delete(pid);
}

/** Remove `folder` if this process ends first; returns a way to stop watching it. */
export function watchFolder(folder: string): () => void {
  install();
  folders.add(folder);
  return () => folders.delete(folder);
}

/** SIGKILL the process group `pid` leads, or the process alone where there is no group. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {} // Gone already.
  }
}

/** Kill every watched process and remove every watched folder, now. */
function reap(): void {
  for (const pid of processes) killGroup(pid);
  processes.clear();
  for (const folder of folders) {
    try {
      rmSync(folder, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    } catch {}
  }
  folders.clear();
}

/**
 * First of the signal's listeners (prepended), so it counts the program's own before any has
 * run and removed itself: none, and the signal is raised again to end the process as it would
 * have ended without us.
 */
function onSignal(signal: NodeJS.Signals): void {
  const others = process.listenerCount(signal) - 1;
  reap();
  if (others === 0) {
    process.removeListener(signal, onSignal);
    process.kill(process.pid, signal);
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', reap);
  for (const signal of SIGNALS) process.prependListener(signal, onSignal);
  sweep();
}

/** Remove the folders that emulators no longer running left behind (killed with SIGKILL). */
function sweep(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^cloud-browser-[a-z]+-(\d+)-/.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || alive(Number(pid))) continue;
    try {
      rmSync(join(tmpdir(), name), { recursive: true, force: true });
    } catch {}
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
