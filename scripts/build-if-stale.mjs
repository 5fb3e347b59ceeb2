// `prepack` of each package (run in its folder): build unless dist is newer than every source of it (npm test has just built it,
// and attw and publint pack the package again), so a tarball never ships a stale dist.
import { execSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const newest = (path) => {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
};
let built = 0;
try {
  const files = readdirSync('dist').filter((f) => /\.(c?js|d\.c?ts)$/.test(f));
  if (files.length > 0) built = Math.min(...files.map((f) => statSync(join('dist', f)).mtimeMs));
} catch {}
const sources = Math.max(newest('src'), newest('package.json'), newest('tsup.config.ts'));
if (built < sources) execSync('npm run build', { stdio: 'inherit' });
