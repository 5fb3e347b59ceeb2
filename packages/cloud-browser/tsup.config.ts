import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { defineConfig, type Options } from 'tsup';

type Plugin = NonNullable<Options['esbuildPlugins']>[number];

/** Node's built-ins as `node:` specifiers, the bundled dependencies' `require('fs')` too. */
const nodePrefix: Plugin = {
  name: 'node-prefix',
  setup(build) {
    const names = builtinModules.filter((m) => !m.startsWith('_') && !m.startsWith('node:'));
    const filter = new RegExp(`^(${names.map((m) => m.replace(/[/]/g, '\\/')).join('|')})$`);
    build.onResolve({ filter }, (args) => ({ path: `node:${args.path}`, external: true }));
  },
};

/**
 * The MCP SDK's default schema validator (Ajv, 250 KB) is never used: the server passes its own
 * (src/mcp/server.ts). Its module is replaced by one that says so, if it were ever called.
 */
const noAjv: Plugin = {
  name: 'no-ajv',
  setup(build) {
    build.onResolve({ filter: /validation\/ajv-provider\.js$/ }, (args) => ({ path: args.path, namespace: 'no-ajv' }));
    build.onLoad({ filter: /.*/, namespace: 'no-ajv' }, () => ({
      contents:
        "export class AjvJsonSchemaValidator { getValidator() { throw new Error('cloud-browser passes its own JSON Schema validator to the MCP SDK'); } }",
      loader: 'js',
    }));
  },
};

/** Packages the user's install must not be made to carry or that are theirs: never bundled. */
const EXTERNAL = ['playwright-core', 'puppeteer-core', '@playwright/test', 'ws', /^cloud-browser-emulator/];

/**
 * The licence of every package bundled into dist, from esbuild's list of inputs, in one file
 * shipped beside the code (their licences ask for the notice to travel with the code).
 */
function writeThirdPartyLicenses(): void {
  const packages = new Map<string, string>();
  for (const file of readdirSync('dist').filter((f) => /^metafile-.*\.json$/.test(f))) {
    const { inputs } = JSON.parse(readFileSync(join('dist', file), 'utf8')) as { inputs: Record<string, unknown> };
    for (const input of Object.keys(inputs)) {
      const match = /^(.*node_modules\/((?:@[^/]+\/)?[^/]+))\//.exec(input);
      if (match?.[1] && match[2]) packages.set(match[2], match[1]);
    }
    rmSync(join('dist', file));
  }
  const sections = [...packages]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, dir]) => {
      const { version, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        version: string;
        license?: string;
      };
      const text = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
      const body = text ? readFileSync(join(dir, text), 'utf8').trim() : `License: ${license ?? 'see the package'}`;
      return `## ${name} ${version} (${license ?? 'unknown'})\n\n${body}\n`;
    });
  writeFileSync('dist/THIRD_PARTY_LICENSES.md', `# Third-party code bundled in this package\n\n${sections.join('\n')}`);
}

const node: Options = {
  entry: {
    index: 'src/index.ts',
    playwright: 'src/connect/playwright.ts',
    puppeteer: 'src/connect/puppeteer.ts',
    emulator: 'src/emulator-moved.ts',
    internal: 'src/internal/index.ts',
    test: 'src/connect/test.ts',
    webhooks: 'src/webhooks/index.ts',
    crawler: 'src/crawler/index.ts',
    api: 'src/api/index.ts',
    mcp: 'src/mcp/index.ts',
    cli: 'src/cli/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  // Unminified and readable, so stack traces need no maps (maps of the bundled dependencies
  // would double the install).
  sourcemap: false,
  // `npm run build` empties dist first: two builds write into it at once.
  clean: false,
  target: 'node20',
  // Keep `node:` specifiers as written: they cannot be shadowed by a package of the same name.
  removeNodeProtocol: false,
  esbuildPlugins: [nodePrefix, noAjv],
  splitting: true,
  treeshake: true,
  // The optional peers are the user's own; `ws` stays the one runtime dependency (it picks up
  // the user's optional native addons); the emulator is a package of its own, loaded by the
  // command only when one of its commands runs.
  external: EXTERNAL,
  // zod, commander, eventsource-parser and meros are bundled (what of them is used): zod alone
  // installs 8.2 MB for the few hundred KB of it that the option checks use (measured by
  // `npm run bench -- install`), and the command's parser is used only by the command.
  noExternal: [/^(?!ws$|playwright-core|puppeteer-core|@playwright\/test|cloud-browser-emulator)/],
  // Bundled CommonJS packages call require() for Node's built-ins; an ES module has none.
  banner: ({ format }) =>
    format === 'esm'
      ? {
          js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);",
        }
      : {},
  metafile: true,
  onSuccess: async () => writeThirdPartyLicenses(),
};

/**
 * `cloud-browser/webhooks/web` on its own: no banner (it loads nothing of Node, not even
 * `node:module`), no chunk shared with the Node entries, so an edge bundler never meets a built-in.
 */
const web: Options = {
  entry: { 'webhooks-web': 'src/webhooks/web.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: false,
  clean: false,
  target: 'es2022',
  platform: 'neutral',
  splitting: false,
  treeshake: true,
};

export default defineConfig([node, web]);
