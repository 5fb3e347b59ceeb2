/**
 * What a user installs: the packed tarballs (`npm pack`, the files a publish would ship)
 * installed into a fresh project (npm's cache first, `--prefer-offline`), then measured:
 * packages and bytes on disk under node_modules. Goal: at most 3 MB for the connector's users,
 * who install `cloud-browser` and nothing else (the peers are theirs and optional); the
 * emulator (`cloud-browser-emulator`, a dev dependency) is measured beside it, without a goal.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installInto, packWorkspace } from '../test/support/packed.js';

const GOAL_MB = 3;

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

/** Install `tarballs` into a fresh project; its node_modules measured. */
function installed(work: string, name: string, tarballs: string[]) {
  const project = installInto(work, name, tarballs);
  return { all: sizeOf(join(project, 'node_modules')), ours: sizeOf(join(project, 'node_modules', 'cloud-browser')) };
}

const work = mkdtempSync(join(tmpdir(), 'cloud-browser-install-'));
try {
  const packed = packWorkspace(work);
  const client = packed.find((f) => /[/\\]cloud-browser-\d/.test(f)) ?? '';
  const alone = installed(work, 'client', [client]);
  const mb = alone.all.bytes / 1e6;
  console.log(
    `install: cloud-browser alone: ${alone.all.packages} packages, ${mb.toFixed(1)} MB on disk (goal <= ${GOAL_MB} MB) ${mb <= GOAL_MB ? 'OK' : 'MISSED'} — the package itself ${(alone.ours.bytes / 1e6).toFixed(1)} MB, tarball ${(statSync(client).size / 1e6).toFixed(1)} MB`,
  );
  const both = installed(work, 'both', packed);
  console.log(
    `install: cloud-browser with cloud-browser-emulator: ${both.all.packages} packages, ${(both.all.bytes / 1e6).toFixed(1)} MB on disk (a dev dependency; no goal)`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
