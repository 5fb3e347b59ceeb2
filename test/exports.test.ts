import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

// Runs against the build (`npm test` builds first): each package as users load it, by its own
// name, in a separate Node process for each module system.
interface Manifest {
  name: string;
  version: string;
  exports: Record<string, unknown>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}
const manifest = (dir: string) =>
  JSON.parse(readFileSync(new URL(`../packages/${dir}/package.json`, import.meta.url), 'utf8')) as Manifest;
const pkg = manifest('cloud-browser');
const emulatorPkg = manifest('emulator');
/** The subpath that only says where the emulator went. */
const MOVED = 'cloud-browser/emulator';
const subpathsOf = (p: Manifest) =>
  Object.keys(p.exports)
    .filter((s) => s !== './package.json')
    .map((s) => (s === '.' ? p.name : `${p.name}/${s.slice(2)}`));
const subpaths = [...subpathsOf(pkg), ...subpathsOf(emulatorPkg)].filter((s) => s !== MOVED);

function load(kind: 'import' | 'require', specifier: string): string[] {
  const script =
    kind === 'import'
      ? `import(${JSON.stringify(specifier)}).then((m) => console.log(JSON.stringify(Object.keys(m).sort())))`
      : `console.log(JSON.stringify(Object.keys(require(${JSON.stringify(specifier)})).sort()))`;
  const out = execFileSync(process.execPath, ['-e', script], {
    cwd: new URL('..', import.meta.url),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out) as string[];
}

/** What a bundle loads at run time: the packages named by its import and require calls. */
function packagesLoaded(dist: URL): Set<string> {
  const loaded = new Set<string>();
  for (const file of readdirSync(dist).filter((f) => /\.c?js$/.test(f))) {
    const text = readFileSync(new URL(file, dist), 'utf8');
    const specifiers = [
      ...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"./][^'"]*)['"]/gm),
      ...text.matchAll(/\brequire\(['"]([^'"./][^'"]*)['"]\)/g),
    ].map((m) => m[1] ?? '');
    for (const name of specifiers.filter((n) => !n.startsWith('node:'))) {
      loaded.add(
        name
          .split('/')
          .slice(0, name.startsWith('@') ? 2 : 1)
          .join('/'),
      );
    }
  }
  return loaded;
}

describe('every subpath of the package loads both ways', () => {
  it('lists at least the root entry', () => {
    expect(subpaths).toContain(pkg.name);
  });

  it.each(subpaths)('%s loads with import() and require(), with the same exports', (specifier) => {
    const esm = load('import', specifier).filter((k) => k !== 'default' && k !== 'module.exports');
    const cjs = load('require', specifier);
    expect(esm.length).toBeGreaterThan(0);
    expect(esm).toEqual(cjs);
  });

  it('cloud-browser/emulator says where the emulator went, both ways', () => {
    for (const kind of ['import', 'require'] as const) {
      expect(() => load(kind, MOVED)).toThrow(
        /moved to the package cloud-browser-emulator: run `npm install --save-dev/,
      );
    }
  });

  it('guards recognise an error made by the other module copy, where instanceof cannot', () => {
    const script = `import(${JSON.stringify(pkg.name)}).then((esm) => {
      const cjs = require(${JSON.stringify(pkg.name)});
      const e = cjs.ServiceError.generate({ code: 'X', message: 'm' }, { status: 429 });
      console.log(JSON.stringify([esm.isRateLimitError(e), esm.isServiceError(e), esm.isConfigError(e), e instanceof esm.RateLimitError]));
    })`;
    const out = execFileSync(process.execPath, ['-e', script], {
      cwd: new URL('..', import.meta.url),
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual([true, true, false, false]);
  });

  it('the root entry does not load Playwright or Puppeteer', () => {
    const script = `require(${JSON.stringify(pkg.name)}); const loaded = Object.keys(require.cache).filter((k) => /playwright|puppeteer/.test(k)); console.log(JSON.stringify(loaded))`;
    const out = execFileSync(process.execPath, ['-e', script], {
      cwd: new URL('..', import.meta.url),
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual([]);
  });

  it('keeps the `node:` prefix of every built-in module it loads (none can be shadowed by a package)', () => {
    const builtins = new Set(builtinModules.filter((m) => !m.startsWith('_')));
    const bare: string[] = [];
    for (const dir of ['cloud-browser', 'emulator']) {
      const dist = new URL(`../packages/${dir}/dist/`, import.meta.url);
      for (const file of readdirSync(dist).filter((f) => /\.c?js$/.test(f))) {
        const text = readFileSync(new URL(file, dist), 'utf8');
        for (const [, name] of text.matchAll(/(?:from |require\(|import\()['"]([^'"]+)['"]/g)) {
          if (name && builtins.has(name)) bare.push(`${dir}/${file}: ${name}`);
        }
      }
    }
    expect(bare).toEqual([]);
  });

  it('cloud-browser loads no package at run time but ws and the optional peers: the rest is bundled (the install stays small)', () => {
    const allowed = ['ws', ...Object.keys(pkg.peerDependencies ?? {})];
    const loaded = packagesLoaded(new URL('../packages/cloud-browser/dist/', import.meta.url));
    expect([...loaded].filter((name) => !allowed.includes(name))).toEqual([]);
    expect(Object.keys(pkg.dependencies ?? {})).toEqual(['ws']);
  });

  it('cloud-browser-emulator loads each dependency as itself, declared, and the client at its own version', () => {
    const declared = Object.keys({ ...emulatorPkg.dependencies, ...emulatorPkg.peerDependencies });
    const loaded = packagesLoaded(new URL('../packages/emulator/dist/', import.meta.url));
    expect([...loaded].filter((name) => !declared.includes(name))).toEqual([]);
    expect(loaded).toContain('cloud-browser');
    expect(emulatorPkg.dependencies?.['cloud-browser']).toBe(pkg.version);
  });

  it("no code of the emulator ships in the client: its dist names none of the emulator's modules", () => {
    const dist = new URL('../packages/cloud-browser/dist/', import.meta.url);
    const text = readdirSync(dist)
      .filter((f) => /\.c?js$/.test(f))
      .map((f) => readFileSync(new URL(f, dist), 'utf8'))
      .join('\n');
    for (const marker of ['function startEmulator', 'class RfbConnection', 'Readability', 'TurndownService']) {
      expect(text).not.toContain(marker);
    }
  });

  it('cloud-browser/webhooks/web, as built, bundles for the browser platform with no Node built-in', async () => {
    for (const file of ['webhooks-web.js', 'webhooks-web.cjs']) {
      const result = await build({
        entryPoints: [fileURLToPath(new URL(`../packages/cloud-browser/dist/${file}`, import.meta.url))],
        bundle: true,
        platform: 'browser',
        write: false,
        logLevel: 'silent',
      });
      expect(result.errors).toEqual([]);
      expect(result.outputFiles[0]?.text).toContain('crypto.subtle');
    }
  });
});
