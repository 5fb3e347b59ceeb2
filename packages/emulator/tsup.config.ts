import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};
/** A package name and its subpaths. */
const andSubpaths = (name: string) => new RegExp(`^${name.replace(/[/]/g, '\\/')}(\\/|$)`);

export default defineConfig({
  // The crawler's conversion worker is a file of its own, found beside the chunks at run time.
  entry: { index: 'src/index.ts', command: 'src/command.ts', 'convert-worker': 'src/crawler/convert-worker.ts' },
  // `import.meta.url` in the CommonJS build too (the worker is found from it).
  shims: true,
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: false,
  clean: false,
  target: 'node20',
  removeNodeProtocol: false,
  splitting: true,
  treeshake: true,
  // Nothing is bundled: every dependency is declared and installed as itself (the client,
  // `cloud-browser`, at this very version), so a user's lock file sees and dedupes them.
  external: [...Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies }).map(andSubpaths)],
});
