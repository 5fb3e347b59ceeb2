/**
 * `cloud-browser mcp`: an MCP server for agents on this machine (docs/decisions.md D31). It opens
 * a cloud browser session with the session flags (or joins the named one), serves the tools of
 * `cloud-browser/mcp` over it on standard input and output (nothing else is written there: logs
 * go to standard error), or on loopback HTTP with `--http <port>`, and ends the session when the
 * agent goes away or on a signal.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../errors.js';
import { checkNumber } from '../internal/knobs.js';
import type { BrowserUrlOptions } from '../session/url.js';
import { sessionOptionsFrom } from './session-options.js';
import { interrupted } from './signals.js';

/** What the command is given besides the session flags. */
export interface McpFlags extends Record<string, unknown> {
  http?: string;
}

const log = (line: string) => process.stderr.write(`cloud-browser mcp: ${line}\n`);

/** The port of `--http`, checked. */
function portOf(value: string): number {
  const port = Number(value);
  const issue = checkNumber('--http', value.trim() === '' ? Number.NaN : port, {
    min: 0,
    max: 65535,
    integer: true,
    unit: 'port (0 picks one)',
  });
  if (issue) throw new ConfigError('mcp', [issue]);
  return port;
}

export async function serveMcp(flags: McpFlags): Promise<void> {
  const port = flags.http === undefined ? undefined : portOf(flags.http);
  const options = (await sessionOptionsFrom(flags)) as BrowserUrlOptions;
  const playwright = await import('playwright-core').catch(() => {
    throw new ConfigError('mcp', [
      {
        option: 'playwright-core',
        message:
          'cloud-browser mcp drives the session with Playwright: run `npm install playwright-core` (no browser download needed)',
      },
    ]);
  });
  const [{ connectPlaywright }, { BrowserTools, createMcpServer, McpHttpEndpoint }] = await Promise.all([
    import('../connect/playwright.js'),
    import('../mcp/index.js'),
  ]);
  const session = await connectPlaywright(playwright.chromium, options, { retries: 2 });
  log(`session open: run ${session.runId ?? '(none)'}`);
  const secrets = [options.api_key, options.vnc_password, options.vault_key].filter(
    (s): s is string => typeof s === 'string',
  );
  const tools = () => new BrowserTools(session.browser, secrets);
  let agentLeft: Promise<string>;
  let stopHttp = async () => {};
  if (port === undefined) {
    const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
    const transport = new StdioServerTransport();
    agentLeft = new Promise((resolve) => {
      process.stdin.once('end', () => resolve('the agent closed standard input'));
      transport.onclose = () => resolve('the agent went away');
    });
    await createMcpServer(tools()).connect(transport);
  } else {
    const hosts = (p: number) => [`127.0.0.1:${p}`, `localhost:${p}`];
    let endpoint: InstanceType<typeof McpHttpEndpoint> | undefined;
    const server = createServer((req, res) => {
      if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp' || !endpoint) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('the MCP endpoint is /mcp\n');
        return;
      }
      void endpoint.handle(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    const bound = (server.address() as AddressInfo).port;
    endpoint = new McpHttpEndpoint(tools, hosts(bound));
    process.stdout.write(`MCP endpoint: http://127.0.0.1:${bound}/mcp\n`);
    agentLeft = new Promise(() => {});
    stopHttp = async () => {
      await endpoint?.close();
      await new Promise((r) => server.close(r));
      server.closeAllConnections();
    };
  }
  const why = await Promise.race([interrupted(), agentLeft, session.closed.then((e) => e)]);
  await stopHttp();
  if (typeof why === 'string') {
    log(`${why}: closing the session`);
    await session.close();
  } else {
    log(`the session ended (code ${why.closeCode}${why.reason ? `: ${why.reason}` : ''})`);
    await session.close().catch(() => {});
    process.exitCode = 1;
  }
}
