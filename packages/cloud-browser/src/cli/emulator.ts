/**
 * The `emulator` and `demo` commands live in the package `cloud-browser-emulator`: loaded when
 * they run, so the other commands never read it, and a clear word when it is not installed.
 */
import { CloudBrowserError } from '../errors.js';

/** What `cloud-browser-emulator/command` gives the command. */
export interface EmulatorCommands {
  serveEmulator(options: {
    port: string;
    host: string;
    chromium?: string | undefined;
    apiKey?: string | undefined;
  }): Promise<void>;
  runDemo(): Promise<void>;
}

/** The emulator package's commands, or an error saying which package to add. */
export async function loadEmulatorCommands(command: string): Promise<EmulatorCommands> {
  // A variable specifier: bundlers leave the optional package alone.
  const name = 'cloud-browser-emulator/command';
  try {
    return (await import(name)) as EmulatorCommands;
  } catch (error) {
    // Only the package itself missing; a dependency missing inside it is its own error (the
    // message then names the package it imports from, which holds `cloud-browser-emulator` too).
    const message = String((error as Error | undefined)?.message);
    if (!/^Cannot find (?:package|module) 'cloud-browser-emulator(?:\/command)?'/.test(message)) throw error;
    throw new CloudBrowserError(
      `\`cloud-browser ${command}\` runs the local emulator, in the package cloud-browser-emulator, which is not installed: add it with \`npm install --save-dev cloud-browser-emulator\``,
    );
  }
}
