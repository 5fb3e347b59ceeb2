/**
 * What the connectors and clients tell about their work: connecting, connected, refused,
 * retrying, closing. To a `logger` the user passes (`console`, pino, winston: anything with
 * `debug`, `info` and `warn`), and to standard error when `DEBUG` names the channel
 * (`DEBUG=cloud-browser:*`, `cloud-browser:connect`, `cloud-browser:api`,
 * `cloud-browser:crawler`), as the `debug` package reads it. Every line passes through the
 * redaction that errors use: no key, password or vault key is ever logged.
 */
import type { ConfigIssue } from '../errors.js';
import { redact } from './redact.js';

/** A logger: `console` is one. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
}

export type LogChannel = 'connect' | 'api' | 'crawler';
export type LogLevel = keyof Logger;

/** Logs one line at a level; a no-op when neither a logger nor DEBUG asks for it. */
export type Log = (level: LogLevel, message: string) => void;

const NONE: Log = () => {};

/** Whether `DEBUG` (comma- or space-separated patterns, `*` a wildcard, `-` excluding) names `name`. */
export function debugEnabled(name: string, value = process.env.DEBUG): boolean {
  if (!value) return false;
  let on = false;
  for (const pattern of value.split(/[\s,]+/).filter(Boolean)) {
    const exclude = pattern.startsWith('-');
    const glob = exclude ? pattern.slice(1) : pattern;
    const re = new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    if (re.test(name)) on = !exclude;
  }
  return on;
}

/** The log of one channel: to `logger` if given, and to standard error when DEBUG names it. */
export function logFor(channel: LogChannel, logger: Logger | undefined): Log {
  const name = `cloud-browser:${channel}`;
  const toStderr = typeof process !== 'undefined' && debugEnabled(name);
  if (!logger && !toStderr) return NONE;
  let last = Date.now();
  return (level, message) => {
    const line = redact(message);
    if (logger) logger[level](`${name} ${line}`);
    if (toStderr) {
      const now = Date.now();
      process.stderr.write(`${name} ${level} ${line} +${now - last}ms\n`);
      last = now;
    }
  };
}

/** The problem with a `logger` option that cannot log (debug, info and warn functions): none, or one. */
export function loggerIssues(value: unknown): ConfigIssue[] {
  const v = value as Partial<Logger> | undefined;
  const ok =
    value === undefined ||
    (typeof v === 'object' &&
      v !== null &&
      typeof v.debug === 'function' &&
      typeof v.info === 'function' &&
      typeof v.warn === 'function');
  return ok ? [] : [{ option: 'logger', message: '`logger` must have debug, info and warn functions (console has)' }];
}
