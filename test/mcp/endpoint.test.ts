/**
 * The emulator's MCP endpoint through the official MCP SDK's client (streamable HTTP): every
 * `enable_mcp` session serves the tools over its own browser, behind its key, gone with it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPlaywright } from '../../packages/cloud-browser/src/connect/playwright.js';
import type { CloudBrowserSession } from '../../packages/cloud-browser/src/connect/session.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { eventually } from '../support/drivers.js';
import { decodePng } from '../support/png.js';
import { type ServiceSite, startServiceSite } from '../support/service-site.js';
import { TOOLS_PAGE } from '../support/webmcp-page.js';

const BUTTON_PAGE = `<!doctype html><title>press</title>
<style>body { background: rgb(20, 160, 90); margin: 0; height: 100vh; }</style>
<h1>Hello from the page</h1><p id="state">waiting</p>
<button onclick="document.getElementById('state').textContent = 'pressed'">Press me</button>
<label>Name <input id="name"></label>`;

const KEY = 'emu-mcp-key-0123456789abcdef';
const OTHER_KEY = 'emu-mcp-other-key-fedcba9876543210';
let emulator: Emulator;
let site: ServiceSite;

beforeAll(async () => {
  emulator = await startEmulator({ apiKeys: [KEY, OTHER_KEY] });
  site = await startServiceSite({ '/button': BUTTON_PAGE, '/tools': TOOLS_PAGE });
});
afterAll(async () => {
  await emulator?.close();
  await site?.close();
});

/** An MCP client of `endpoint`, with `key` as a bearer token. */
async function mcpClient(endpoint: string, key: string): Promise<Client> {
  const client = new Client({ name: 'cloud-browser-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

/** An `enable_mcp` session through Playwright, a page opened in it, closed after `body`. */
async function withSession(
  options: object,
  body: (session: CloudBrowserSession<Browser>, page: Page) => Promise<void>,
): Promise<void> {
  const session = await connectPlaywright(chromium, {
    browser_url: emulator.browserUrl,
    api_key: KEY,
    enable_mcp: true,
    ...options,
  });
  try {
    const context = session.browser.contexts()[0];
    if (!context) throw new Error('the session has no default context');
    await body(session, await context.newPage());
  } finally {
    await session.close();
  }
}

type Content = { type: string; text?: string; data?: string; mimeType?: string }[];

/** Every text the agent was shown, kept to check that no secret is in it. */
const shown: string[] = [];

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as { content: Content; isError?: boolean };
  for (const c of result.content) if (c.type === 'text') shown.push(c.text ?? '');
  return { ...result, text: result.content.map((c) => c.text ?? '').join('\n') };
}

describe('the MCP endpoint of an enable_mcp session', () => {
  it('serves the tools over the session: navigate, snapshot, click by reference, type, screenshot, WebMCP', async () => {
    await withSession({ enable_vnc: true, vnc_password: 'vnc-secret-pass' }, async (session, page) => {
      const endpoint = session.mcpEndpoint as string;
      expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp\/run-[0-9a-f]+$/);
      expect(endpoint).not.toContain(KEY);
      expect(emulator.sessions().find((s) => s.runId === session.runId)?.mcpEndpoint).toBe(endpoint);
      const client = await mcpClient(endpoint, KEY);
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const name of [
        'browser_navigate',
        'browser_navigate_back',
        'browser_snapshot',
        'browser_click',
        'browser_hover',
        'browser_type',
        'browser_press_key',
        'browser_select_option',
        'browser_take_screenshot',
        'browser_evaluate',
        'browser_wait_for',
        'browser_tabs',
        'browser_rendered_content',
        'browser_downloads',
        'browser_captchas',
        'browser_webmcp_list',
        'browser_webmcp_call',
      ]) {
        expect(names).toContain(name);
      }

      const navigated = await call(client, 'browser_navigate', { url: `${site.url}/button` });
      expect(navigated.isError).toBeFalsy();
      // The tools act on the session's own page: the user's Playwright sees the same.
      expect(page.url()).toBe(`${site.url}/button`);
      const snapshot = await call(client, 'browser_snapshot');
      expect(snapshot.text).toContain('Hello from the page');
      const ref = /button "Press me" \[ref=(\w+)\]/.exec(snapshot.text)?.[1];
      expect(ref).toBeDefined();
      const clicked = await call(client, 'browser_click', { element: 'Press me button', target: ref });
      expect(clicked.isError).toBeFalsy();
      expect(clicked.text).toContain('pressed');
      expect(await page.textContent('#state')).toBe('pressed');

      const input = /textbox "Name" \[ref=(\w+)\]/.exec(clicked.text)?.[1];
      await call(client, 'browser_type', { ref: input, text: 'Ada Lovelace' });
      expect(await page.inputValue('#name')).toBe('Ada Lovelace');

      const shot = await call(client, 'browser_take_screenshot');
      const image = shot.content.find((c) => c.type === 'image');
      expect(image?.mimeType).toBe('image/png');
      const picture = decodePng(Buffer.from(image?.data as string, 'base64'));
      expect(picture.at(20, picture.height - 20)).toEqual([20, 160, 90]);

      const markdown = await call(client, 'browser_rendered_content');
      expect(markdown.text).toContain('# Hello from the page');

      const stale = await call(client, 'browser_click', { target: 'e9999' });
      expect(stale.isError).toBe(true);
      expect(stale.text).toMatch(/not in the current page: take a new snapshot/);
      const wrong = await call(client, 'browser_navigate', { url: 42 });
      expect(wrong.isError).toBe(true);
      expect(wrong.text).toContain('url must be a string');
      await client.close();
    });
  });

  it("lists and calls the page's WebMCP tools, and the user's CDP session hears WebMCP.toolResponded", async () => {
    await withSession({}, async (session, page) => {
      await page.goto(`${site.url}/tools`);
      const cdp = await page.context().newCDPSession(page);
      const responded: Record<string, unknown>[] = [];
      cdp.on('WebMCP.toolResponded' as never, (p: Record<string, unknown>) => responded.push(p));
      await cdp.send('WebMCP.enable' as never);

      const client = await mcpClient(session.mcpEndpoint as string, KEY);
      const listed = await call(client, 'browser_webmcp_list');
      expect(listed.text).toContain('add');
      expect(listed.text).toContain('Adds two numbers');
      expect(listed.text).toContain('UNTRUSTED');
      const added = await call(client, 'browser_webmcp_call', { name: 'add', params: { a: 20, b: 22 } });
      expect(added.isError).toBeFalsy();
      expect(added.text).toContain('42');
      expect(await page.textContent('#out')).toBe('added 42');
      await eventually(
        () => responded.length,
        (n) => n >= 1,
      );
      expect(String(responded[0]?.status).toLowerCase()).toBe('completed');
      const failed = await call(client, 'browser_webmcp_call', { name: 'fail' });
      expect(failed.isError).toBe(true);
      expect(failed.text).toContain('it failed on purpose');
      await client.close();
    });
  });

  it('refuses a request without the key or with another key, answers unblock with the address, and 404 after the session', async () => {
    const unblocked = await fetch(`${emulator.apiUrl}/unblock?key=${KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${site.url}/button`, enable_mcp: true }),
    });
    const answer = (await unblocked.json()) as { mcp_endpoint: string; session_id: string; run_id: string };
    expect(answer.mcp_endpoint).toBe(`${emulator.apiUrl}/mcp/${answer.run_id}`);
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const post = (headers: Record<string, string>, url = answer.mcp_endpoint) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(initialize),
      });
    const none = await post({});
    expect(none.status).toBe(401);
    expect(await none.text()).toContain('Authorization: Bearer');
    expect((await post({ authorization: 'Bearer not-a-key' })).status).toBe(401);
    // Another key's: that key has no such session.
    expect((await post({ authorization: `Bearer ${OTHER_KEY}` })).status).toBe(404);

    const client = await mcpClient(answer.mcp_endpoint, KEY);
    const snapshot = await call(client, 'browser_snapshot');
    expect(snapshot.text).toContain('Hello from the page');
    await fetch(`${emulator.apiUrl}/session/${answer.session_id}/stop?key=${KEY}`, { method: 'POST' });
    await eventually(
      async () => (await post({ authorization: `Bearer ${KEY}` })).status,
      (status) => status === 404,
    );
    await client.close().catch(() => {});
  });

  it('shows the agent no key and no password', () => {
    expect(shown.length).toBeGreaterThan(5);
    for (const text of shown) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain('vnc-secret-pass');
    }
  });
});
