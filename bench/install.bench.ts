/**
 * What a user installs: the packed tarball (`npm pack`, the files a publish would ship)
 * installed into a fresh project (npm's cache first, `--prefer-offline`), then measured:
 * packages and bytes on disk under node_modules. Goal: at most 8 MB for the connector's users,
 * who install the package and nothing else (the peers are theirs and optional).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GOAL_MB = 8;
const npm = (args: string[], cwd: string) =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

function sizeOf(path: string): { bytes: number; packages: number } {
  let bytes = 0;
  let packages = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (entry.name !== '.bin' && dir.endsWith('node_modules') && !entry.name.startsWith('@')) packages++;
        walk(full);
      } else bytes += statSync(full).size;
    }
  };
  walk(path);
  return { bytes, packages };
}

const work = mkdtempSync(join(tmpdir(), 'cloud-browser-install-'));
try {
  const tarball = npm(['pack', '--pack-destination', work, '--silent'], ROOT).trim().split('\n').at(-1) ?? '';
  const project = join(work, 'user');
  execFileSync('mkdir', [project]);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user', private: true }));
  npm(['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(work, tarball)], project);
  const { bytes, packages } = sizeOf(join(project, 'node_modules'));
  const ours = sizeOf(join(project, 'node_modules', 'cloud-browser'));
  const mb = bytes / 1e6;
  console.log(
    `install: ${packages} packages, ${mb.toFixed(1)} MB on disk (goal <= ${GOAL_MB} MB) ${mb <= GOAL_MB ? 'OK' : 'MISSED'} — the package itself ${(ours.bytes / 1e6).toFixed(1)} MB, tarball ${(statSync(join(work, tarball)).size / 1e6).toFixed(1)} MB`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
