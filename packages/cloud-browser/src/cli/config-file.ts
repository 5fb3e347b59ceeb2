/** `--config file.json`: read and parsed, with the file, line and column of a mistake. */
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../errors.js';

/** The line and column (from 1) of `offset` in `text`. */
function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/**
 * The crawl options of a JSON file (an object of wire names). A file that cannot be read, is
 * not JSON (its line and column named) or is not an object is a ConfigError naming `--config`.
 */
export async function readConfigFile(file: string): Promise<Record<string, unknown>> {
  const refuse = (message: string) => new ConfigError('crawl config', [{ option: '--config', message }]);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw refuse(
      `--config ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}, give a readable JSON file`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const at = /position (\d+)/.exec(message)?.[1];
    const where = at === undefined ? position(text, text.length) : position(text, Number(at));
    const why = message.replace(/\s*in JSON at position \d+.*$/s, '').replace(/ \(line \d+ column \d+\)$/, '');
    throw refuse(`--config ${file}, line ${where.line} column ${where.column}: ${why} (the file must be JSON)`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw refuse(`--config ${file} must hold a JSON object of crawl options (spec wire names)`);
  }
  return value as Record<string, unknown>;
}
