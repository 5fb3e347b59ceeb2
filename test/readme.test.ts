/**
 * The README cannot drift: every fenced `ts` block is extracted, type-checked as a user's file
 * against the built package (by its name, strict), and the runnable ones run against the
 * emulator, `https://example.com` pointed at a local site. Fragments may use the names a reader
 * has from the text around them (`url`, `secrets`, `onDelivery`, `app`...), declared below.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../packages/emulator/src/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const BLOCKS = [...README.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => ({
  line: README.slice(0, m.index).split('\n').length,
  code: m[1] ?? '',
}));

/** What the text around the fragments gives the reader. */
const PRELUDE = `import type { Hono } from 'hono';
import type { CloudBrowserApi } from 'cloud-browser/api';
import type { Delivery } from 'cloud-browser/webhooks';
declare global {
  const url: URL;
  const runId: string;
  const apiKey: string;
  const vncPassword: string;
  const secrets: string[];
  const onDelivery: (delivery: Delivery) => void;
  const app: Hono;
  const body: Uint8Array;
  const api: CloudBrowserApi;
}
export {};
`;

/** Blocks that run as written against the emulator (by the line their fence opens on). */
const RUNNABLE = [
  ['builds a session URL', /import \{ buildBrowserUrl, isConfigError, redactUrl \}/],
  ['connects Playwright', /const session = await connectPlaywright\(chromium, \{\n\s+proxy_pool/],
  ['connects Puppeteer', /connectPuppeteer\(puppeteer, \{ timeout: 600/],
  [
    'starts an emulator',
    /^import \{ startEmulator \} from 'cloud-browser-emulator';\nconst emulator = await startEmulator\(\); \/\//,
  ],
  ['sets a test suite up', /\/\/ vitest \/ jest global setup/],
  ['crawls, searches and prompts', /const crawler = new CrawlerClient\(\)/],
  ['logs a connection', /logger: console/],
  ['uses the service protocol', /const service = await serviceProtocol\(page\);\nawait page.goto/],
  ['drives a session over MCP', /const agent = new Client/],
] as const;

let project = '';
let emulator: Emulator;
let site: Server;
let origin = '';

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'cloud-browser-readme-'));
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(join(ROOT, 'packages/cloud-browser'), join(project, 'node_modules', 'cloud-browser'), 'dir');
  symlinkSync(join(ROOT, 'packages/emulator'), join(project, 'node_modules', 'cloud-browser-emulator'), 'dir');
  for (const name of [
    '@types',
    'playwright-core',
    'puppeteer-core',
    '@playwright',
    '@modelcontextprotocol',
    'express',
    'hono',
    'fastify',
    'tsx',
  ]) {
    symlinkSync(join(ROOT, 'node_modules', name), join(project, 'node_modules', name), 'dir');
  }
  // `import … from 'playwright'`: the same API as playwright-core.
  symlinkSync(join(ROOT, 'node_modules', 'playwright-core'), join(project, 'node_modules', 'playwright'), 'dir');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'reader', private: true, type: 'module' }));
  writeFileSync(join(project, 'prelude.d.ts'), PRELUDE);
  for (const block of BLOCKS) writeFileSync(join(project, `block-${block.line}.ts`), `${block.code}\nexport {};\n`);
  site = createServer((req, res) => {
    const pages: Record<string, string> = {
      '/': '<title>Example</title><h1>Example</h1><a href="/pricing">pricing</a> <a href="/about">about</a>',
      '/pricing': '<title>Pricing</title><h1>Pricing</h1><p>It costs 300 dollars per month, pricing for everyone.</p>',
      '/about': '<title>About</title><h1>About</h1><p>We make examples.</p>',
    };
    const page = pages[new URL(req.url ?? '/', 'http://x').pathname];
    res.writeHead(page ? 200 : 404, { 'content-type': 'text/html' }).end(page ?? 'not found');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  emulator = await startEmulator();
}, 60_000);

afterAll(async () => {
  await emulator?.close();
  site?.close();
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('the README', () => {
  it('has ts blocks to check', () => {
    expect(BLOCKS.length).toBeGreaterThanOrEqual(14);
  });

  it("gives MCP configurations that parse and run this package's `mcp` command with its key from the environment", () => {
    const configs = [...README.matchAll(/^```json\n([\s\S]*?)^```$/gm)].map((m) => JSON.parse(m[1] ?? ''));
    type Server = { command: string; args: string[]; env: Record<string, string> };
    const servers = configs.flatMap((c) => Object.values({ ...c.mcpServers, ...c.servers }) as Server[]);
    expect(servers.length).toBeGreaterThanOrEqual(2);
    for (const server of servers) {
      expect(server.command).toBe('npx');
      const at = server.args.indexOf('mcp');
      expect(server.args.slice(at - 1, at + 1)).toEqual(['cloud-browser', 'mcp']);
      expect(server.args).toEqual(expect.arrayContaining(['-p', 'cloud-browser', '-p', 'playwright-core']));
      expect(Object.keys(server.env)).toEqual(['CLOUD_API_KEY']);
    }
  });

  it('type-checks every ts block as a user file, strict, against the built package', () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
          lib: ['es2023'], // a Node project's: fetch, streams and Request from @types/node
        },
        files: ['prelude.d.ts', ...BLOCKS.map((b) => `block-${b.line}.ts`)],
      }),
    );
    let output = '';
    try {
      execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project], {
        cwd: project,
        encoding: 'utf8',
      });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    // block-<line>.ts(row,col): the README line is <line> + row.
    expect(output).toBe('');
  }, 120_000);

  it('runs the Fastify recipe on real deliveries: gzip and identity verified, an unsigned one refused', async () => {
    const block = BLOCKS.find((b) => b.code.includes("from 'fastify'"));
    expect(block).toBeDefined();
    const code = (block?.code ?? '').replace('port: 8080', "port: 0, host: '127.0.0.1'");
    const file = join(project, `run-${block?.line}.ts`);
    writeFileSync(
      file,
      `const secrets = ['whsec-readme-fastify'];
const delivered: unknown[] = [];
const onDelivery = (d: { json(): unknown }) => { delivered.push(d.json()); };
${code}
const { signDelivery } = await import('cloud-browser/webhooks');
const port = (fastify.server.address() as { port: number }).port;
const post = (headers: Record<string, string>, body: Uint8Array) =>
  fetch(\`http://127.0.0.1:\${port}/webhook\`, { method: 'POST', headers, body }).then((r) => r.status);
for (const contentEncoding of ['identity', 'gzip'] as const) {
  const d = signDelivery({ body: { event: contentEncoding }, secret: secrets[0] as string, resourceType: 'crawl', contentEncoding });
  console.log(contentEncoding, await post(d.headers, d.body));
}
console.log('unsigned', await post({ 'X-Service-Webhook-Resource-Type': 'crawl', 'content-type': 'application/json' }, new TextEncoder().encode('{}')));
console.log('delivered', JSON.stringify(delivered));
process.exit(0);
`,
    );
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
      cwd: project,
      timeout: 60_000,
    });
    expect(stdout).toBe('identity 200\ngzip 200\nunsigned 401\ndelivered [{"event":"identity"},{"event":"gzip"}]\n');
  }, 90_000);

  it.each(RUNNABLE)(
    'runs the block that %s, against the emulator',
    async (_what, pattern) => {
      const block = BLOCKS.find((b) => pattern.test(b.code));
      expect(block, `no README block matches ${pattern}`).toBeDefined();
      const code = (block?.code ?? '').replaceAll('https://example.com', origin);
      const file = join(project, `run-${block?.line}.ts`);
      // Blocks leave sessions and servers open, as a reader's script would until it ends.
      writeFileSync(file, `${code}\nprocess.exit(0);\n`);
      const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
        cwd: project,
        env: {
          ...process.env,
          CLOUD_BROWSER_URL: emulator.browserUrl,
          CLOUD_API_URL: emulator.apiUrl,
          CLOUD_API_KEY: emulator.apiKey,
        },
        timeout: 90_000,
      });
      // It ran to the end (a failure exits non-zero), and what it printed holds no key.
      expect(stdout + stderr).not.toContain(emulator.apiKey);
    },
    120_000,
  );
});
