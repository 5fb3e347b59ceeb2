/** How the command prints: plain lines, JSON for scripts, one-line errors, a progress bar on terminals. */
import { inspect } from 'node:util';
import { isCloudBrowserError, isConfigError, isServiceError } from '../errors.js';
import { redact } from '../internal/redact.js';
import { SESSION_WIRE_KINDS } from '../session/options.js';
import { flagOf } from './session-options.js';

/** What to do about an error, by kind or code. */
function hint(error: unknown): string {
  if (isConfigError(error)) return 'fix the flags named above (see --help)';
  if (isServiceError(error)) {
    if (error.http_status_code === 401) return 'check CLOUD_API_KEY or --key';
    if (error.http_status_code === 403) return 'your plan or key may not do this';
    if (error.http_status_code === 404) return 'check the id';
    if (error.http_status_code === 429)
      return `slow down${error.retry_delay ? `, retry in ${error.retry_delay} s` : ''}`;
    if (error.code.includes('SEARCH_NOT_READY')) return 'wait for the crawl to finish (crawl wait), then search';
    if (error.code.includes('SEARCH_NOT_ENABLED')) return 'start the crawl with --search';
    if (error.code.includes('REFRESH_NOT_ENABLED')) return 'start the crawl with --refresh';
    if (error.code === 'ERR::CRAWLER::CANCELLED' || error.code === 'ERR::CRAWLER::FAILED')
      return 'see `cloud-browser crawl status <uuid>` for its stop reason';
    if (error.is_retryable) return 'try again';
  }
  if (isCloudBrowserError(error) && error.name === 'ConnectionError')
    return 'check the URL and that the service (or `cloud-browser emulator`) is running';
  if (isCloudBrowserError(error) && error.name === 'TimeoutError') return 'raise --timeout or check the service';
  return 'run again with --verbose for the cause';
}

/** Print an error as one line (code, message, what to do) and set a failing exit code. */
export function fail(error: unknown, verbose: boolean): void {
  const code = isServiceError(error) ? error.code : isCloudBrowserError(error) ? error.name : 'Error';
  let message = error instanceof Error ? error.message : String(error);
  // The command's users know flags, not option names: `enable_vnc` is said `--enable-vnc`.
  if (isConfigError(error)) {
    for (const option of new Set([...error.issues.map((i) => i.option), ...Object.keys(SESSION_WIRE_KINDS)])) {
      message = message
        .replaceAll(`\`${option}: true\``, `\`${flagOf(option)}\``)
        .replaceAll(`\`${option}\``, `\`${flagOf(option)}\``);
    }
  }
  const lines = message.split('\n');
  const first = redact(lines[0] ?? '');
  // Service errors already begin with their code.
  process.stderr.write(
    `error ${code}: ${first.startsWith(`${code}: `) ? first.slice(code.length + 2) : first} (${hint(error)})\n`,
  );
  for (const extra of lines.slice(1)) process.stderr.write(`${redact(extra)}\n`);
  if (verbose && error instanceof Error && error.cause !== undefined) {
    process.stderr.write(`cause: ${redact(inspect(error.cause, { depth: 4 }))}\n`);
  }
  process.exitCode = isConfigError(error) ? 2 : 1;
}

/** Print a value: JSON with --json, else `key: value` lines. */
export function print(value: unknown, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(value)}\n`);
    return;
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value))
      process.stdout.write(`${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}\n`);
    return;
  }
  process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`);
}

/** A one-line progress bar on a terminal; plain lines elsewhere. */
export class Progress {
  private lastLine = '';
  constructor(
    private readonly tty: boolean,
    private readonly out: NodeJS.WriteStream = process.stderr,
    private readonly indent = '',
  ) {}

  update(done: number, total: number | undefined, failed: number, elapsedSeconds: number): void {
    const of = total ? ` of ${total}` : '';
    const text = `${this.indent}visited ${done}${of}, failed ${failed}, ${elapsedSeconds.toFixed(0)} s`;
    if (!this.tty) {
      if (text !== this.lastLine) this.out.write(`${text}\n`);
      this.lastLine = text;
      return;
    }
    const width = 24;
    const ratio = total ? Math.min(1, done / total) : 0;
    const bar = total ? `[${'#'.repeat(Math.round(ratio * width)).padEnd(width, '.')}] ` : '';
    this.out.write(`\r\x1b[2K${bar}${text}`);
  }

  end(): void {
    if (this.tty) this.out.write('\n');
  }
}
