/**
 * An agent's commonest pair of calls, `browser_navigate` then `browser_snapshot`, through the
 * emulator's MCP endpoint (streamable HTTP, the session's Chromium behind the emulator's
 * DevTools pipe and the service's domains) against the same two tools of Playwright's own MCP
 * server (`@playwright/mcp` over stdio, driving a local Chromium of the same executable), on
 * documentation-shaped pages (20 to 500 KB, 100 to 2,000 links each). Both clients are the
 * official MCP SDK's. Paired rounds, each over the same pages; goal: at most 1.2x.
 */
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium } from 'playwright-core';
import { connectPlaywright } from '../packages/cloud-browser/src/connect/playwright.js';
import { findChromium, startEmulator } from '../packages/emulator/src/index.js';
import { docsPage } from './fixtures/docs-site.js';
import { median, pairedRounds, report, showRatios } from './lib.js';

const ROUNDS = Number(process.env.MCP_ROUNDS ?? 7);
/** The pages each round visits (their sizes vary from 20 to 500 KB). */
const VISITS = [3, 11, 25, 40, 57, 76];

const site = createServer((req, res) => {
  const n = Number(/^\/p\/(\d+)\.html$/.exec(req.url ?? '')?.[1] ?? -1);
  if (n < 0) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(docsPage(n, 100));
});
site.listen(0, '127.0.0.1');
await once(site, 'listening');
const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
const sizes = VISITS.map((n) => docsPage(n, 100).length);

const emulator = await startEmulator();
const session = await connectPlaywright(chromium, {
  browser_url: emulator.browserUrl,
  api_key: emulator.apiKey,
  enable_mcp: true,
});
const ours = new Client({ name: 'bench', version: '1.0.0' });
await ours.connect(
  new StreamableHTTPClientTransport(new URL(session.mcpEndpoint as string), {
    requestInit: { headers: { Authorization: `Bearer ${emulator.apiKey}` } },
  }),
);
const theirs = new Client({ name: 'bench', version: '1.0.0' });
await theirs.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [
      fileURLToPath(new URL('../node_modules/@playwright/mcp/cli.js', import.meta.url)),
      '--headless',
      '--isolated',
      '--no-sandbox',
      '--executable-path',
      await findChromium(),
      // It saves the snapshots of its actions as files: somewhere of its own, not the clone.
      '--output-dir',
      mkdtempSync(join(tmpdir(), 'playwright-mcp-')),
    ],
    stderr: 'ignore',
  }),
);

/** Navigate to each page and take its snapshot; the milliseconds, and the snapshot characters. */
async function visit(client: Client): Promise<{ ms: number; chars: number }> {
  let chars = 0;
  const start = performance.now();
  for (const n of VISITS) {
    const navigated = await client.callTool({ name: 'browser_navigate', arguments: { url: `${origin}/p/${n}.html` } });
    const snapshot = await client.callTool({ name: 'browser_snapshot', arguments: {} });
    for (const result of [navigated, snapshot]) {
      if (result.isError) throw new Error(JSON.stringify(result.content).slice(0, 300));
      for (const c of result.content as { text?: string }[]) chars += c.text?.length ?? 0;
    }
  }
  return { ms: performance.now() - start, chars };
}

try {
  await visit(ours);
  await visit(theirs);
  const rounds = await pairedRounds(
    ROUNDS,
    () => visit(ours),
    () => visit(theirs),
    (r) => r.ms,
  );
  const ratio = rounds.ratio;
  report(
    `mcp: browser_navigate + browser_snapshot of ${VISITS.length} docs pages (${Math.min(...sizes) >> 10}-${Math.max(...sizes) >> 10} KB) through the emulator's endpoint vs @playwright/mcp on a local Chromium`,
    ratio,
    '<= 1.2',
    ratio <= 1.2,
    `median of ${ROUNDS} paired rounds (${showRatios(rounds.ratios)}); median ours ${median(rounds.ours.map((r) => r.ms)).toFixed(0)} ms, @playwright/mcp ${median(rounds.bare.map((r) => r.ms)).toFixed(0)} ms; text returned ${(rounds.ours[0]?.chars ?? 0) >> 10} KB vs ${(rounds.bare[0]?.chars ?? 0) >> 10} KB`,
  );
} finally {
  await ours.close();
  await theirs.close();
  await session.close();
  await emulator.close();
  site.close();
}
