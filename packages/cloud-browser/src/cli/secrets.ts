/** Secrets for the command from a file, standard input or the environment, rather than argv (where `ps` shows them). */
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../errors.js';

/** Everything on standard input, as text. */
export async function stdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A secret from `file` (`-` for standard input, the first line's text) or else the environment
 * variable `env`; undefined when neither gives one. A file that cannot be read is a ConfigError
 * naming its flag.
 */
export async function secretFrom(flag: string, file: string | undefined, env: string): Promise<string | undefined> {
  let text: string | undefined;
  if (file === '-') text = await stdin();
  else if (file !== undefined) {
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new ConfigError('command line', [
        {
          option: flag,
          message: `${flag} ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}, give a readable file or - for standard input`,
        },
      ]);
    }
  } else text = process.env[env];
  const value = text?.trim();
  return value ? value : undefined;
}
