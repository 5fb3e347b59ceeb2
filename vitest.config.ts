import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests run the sources: each package name resolves to its source, as tsconfig.json's `paths`
// say (one list, read here), so the emulator and the tests share one copy of the client.
const { compilerOptions } = JSON.parse(readFileSync(new URL('./tsconfig.json', import.meta.url), 'utf8')) as {
  compilerOptions: { paths: Record<string, [string]> };
};
const alias = Object.entries(compilerOptions.paths).map(([name, [path]]) => ({
  find: new RegExp(`^${name}$`),
  replacement: fileURLToPath(new URL(path, import.meta.url)),
}));

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
