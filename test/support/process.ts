/** Long-running commands under test: start one, wait for a line, stop it as Ctrl-C would. */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

export interface Running {
  child: ChildProcessWithoutNullStreams;
  output(): string;
  errors(): string;
  /** SIGINT, then the exit code. */
  stop(): Promise<number | null>;
}

/** Run `node ...args` and resolve once its output matches `ready`. */
export async function startUntil(
  args: string[],
  ready: RegExp,
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeout?: number } = {},
): Promise<Running> {
  const child = spawn(process.execPath, args, { env: options.env ?? process.env, cwd: options.cwd });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${stdout} ${stderr}`)), options.timeout ?? 60_000);
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (ready.test(stdout)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', () => reject(new Error(`exited early: ${stdout} ${stderr}`)));
  });
  return {
    child,
    output: () => stdout,
    errors: () => stderr,
    stop: () => {
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGINT');
      return exited;
    },
  };
}
