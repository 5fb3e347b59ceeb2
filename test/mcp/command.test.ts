/**
 * `cloud-browser mcp` as an agent on this machine runs it: the built command, spawned by the
 * official MCP SDK's stdio client, against the emulator; and with `--http` through its
 * streamable-HTTP client. The session ends when the agent goes away.
 */
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { eventually } from '../support/drivers.js';
import { startUntil } from '../support/process.js';
import { type ServiceSite, startServiceSite } from '../support/service-site.js';
import { TOOLS_PAGE } from '../support/webmcp-page.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'packages', 'cloud-browser', 'dist', 'cli.js');
const KEY = 'mcp-command-key-5c2e9a71d0';

let emulator: Emulator;
let site: ServiceSite;

beforeAll(async () => {
  emulator = await startEmulator({ apiKeys: [KEY] });
  site = await startServiceSite({
    '/hello': '<!doctype html><title>hello</title><h1>Hello over stdio</h1><a href="/tools">tools</a>',
    '/tools': TOOLS_PAGE,
  });
});
afterAll(async () => {
  await emulator?.close();
  await site?.close();
});

/** The environment of the command: the emulator's address and key, nothing of the user's. */
function env(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('CLOUD_')) out[k] = v;
  }
  return { ...out, CLOUD_BROWSER_URL: emulator.browserUrl, CLOUD_API_KEY: KEY };
}

const textOf = (result: unknown) =>
  ((result as { content: { type: string; text?: string }[] }).content ?? []).map((c) => c.text ?? '').join('\n');

describe('cloud-browser mcp', () => {
  it('serves the tools on standard input and output, and ends the session when the agent leaves', async () => {
    const stderr: string[] = [];
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'mcp', '--country', 'de'],
      env: env(),
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (c: Buffer) => stderr.push(c.toString()));
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBe('cloud-browser');
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['browser_navigate', 'browser_snapshot']));
      expect(emulator.sessions()).toHaveLength(1);
      const navigated = await client.callTool({ name: 'browser_navigate', arguments: { url: `${site.url}/hello` } });
      expect(textOf(navigated)).toContain('Hello over stdio');
      const snapshot = textOf(await client.callTool({ name: 'browser_snapshot', arguments: {} }));
      const ref = /link "tools" \[ref=(\w+)\]/.exec(snapshot)?.[1];
      const clicked = textOf(await client.callTool({ name: 'browser_click', arguments: { target: ref } }));
      expect(clicked).toContain(`${site.url}/tools`);
      const called = await client.callTool({
        name: 'browser_webmcp_call',
        arguments: { name: 'add', params: { a: 1, b: 2 } },
      });
      expect(textOf(called)).toContain('3');
      // The session's identity, asked for with --country de.
      const zone = textOf(
        await client.callTool({
          name: 'browser_evaluate',
          arguments: { function: '() => Intl.DateTimeFormat().resolvedOptions().timeZone' },
        }),
      );
      expect(zone).toContain('Europe/Berlin');
    } finally {
      await client.close();
    }
    await eventually(
      () => emulator.sessions().length,
      (n) => n === 0,
    );
    const logs = stderr.join('');
    expect(logs).toContain('session open');
    expect(logs).not.toContain(KEY);
  });

  it('serves streamable HTTP on loopback with --http, and closes the session on Ctrl-C', async () => {
    const running = await startUntil([bin, 'mcp', '--http', '0'], /MCP endpoint: (\S+)/, { env: env() });
    try {
      const endpoint = /MCP endpoint: (\S+)/.exec(running.output())?.[1] as string;
      expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const client = new Client({ name: 'http-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
      const navigated = await client.callTool({ name: 'browser_navigate', arguments: { url: `${site.url}/hello` } });
      expect(textOf(navigated)).toContain('Hello over stdio');
      // Another name for this machine is refused (DNS rebinding protection).
      const rebound = await new Promise<number | undefined>((resolve, reject) => {
        const req = request(endpoint, {
          method: 'POST',
          headers: { host: 'evil.example', 'content-type': 'application/json' },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode);
        });
        req.on('error', reject);
        req.end('{}');
      });
      expect(rebound).toBe(403);
      await client.close();
    } finally {
      expect(await running.stop()).toBe(0);
    }
    expect(running.errors()).toContain('closing the session');
    expect(running.output() + running.errors()).not.toContain(KEY);
    await eventually(
      () => emulator.sessions().length,
      (n) => n === 0,
    );
  });

  it('refuses a wrong --http port with a clear error and exit code 2', async () => {
    const run = spawnSync(process.execPath, [bin, 'mcp', '--http', '70000'], { env: env(), encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--http.*from 0 to 65535/);
    expect(run.stdout).toBe('');
    // Refused before any session was opened.
    expect(emulator.sessions()).toEqual([]);
  });
});
