/** Both packages as a publish ships them (`npm pack`), installed into a fresh project. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const npm = (args: string[], cwd: string) =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Pack both workspace packages into `dir`; their tarballs' paths, the client's first. */
export function packWorkspace(dir: string): string[] {
  return npm(
    ['pack', '-w', 'cloud-browser', '-w', 'cloud-browser-emulator', '--pack-destination', dir, '--silent'],
    ROOT,
  )
    .trim()
    .split('\n')
    .map((f) => join(dir, f));
}

/** A fresh project `name` in `dir` with `tarballs` installed (npm's cache first, no scripts); its path. */
export function installInto(dir: string, name: string, tarballs: readonly string[]): string {
  const project = join(dir, name);
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user', private: true }));
  npm(['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], project);
  return project;
}
