// `prepack`: build unless dist is newer than every source of it (npm test has just built it,
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
  built = Math.min(...['dist/index.js', 'dist/cli.js', 'dist/webhooks-web.js'].map((f) => statSync(f).mtimeMs));
} catch {}
const sources = Math.max(newest('src'), newest('package.json'), newest('tsup.config.ts'));
if (built < sources) execSync('npm run build', { stdio: 'inherit' });
