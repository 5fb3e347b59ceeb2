/**
 * Each tool of the MCP server through the official SDK's client on the emulator's endpoint: what
 * it does to the page, what it answers, and the clear error of a wrong argument.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPlaywright } from '../../packages/cloud-browser/src/connect/playwright.js';
import type { CloudBrowserSession } from '../../packages/cloud-browser/src/connect/session.js';
import { argsProblem } from '../../packages/cloud-browser/src/mcp/schema.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { type ServiceSite, startServiceSite } from '../support/service-site.js';

const FORM = `<!doctype html><title>form</title>
<h1>Order</h1>
<div id="tip" onmouseenter="this.textContent = 'hovered'">hover me</div>
<label>Size <select id="size"><option value="s">Small</option><option value="l">Large</option></select></label>
<label>Note <input id="note" onkeydown="if (event.key === 'Enter') document.title = 'submitted ' + this.value"></label>
<p id="keys"></p>
<a href="/report.txt" download>report</a>
<script>
addEventListener('keydown', (e) => { document.getElementById('keys').textContent += e.key + ' '; });
setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p class="late">arrived late</p>'), 300);
</script>`;

let emulator: Emulator;
let site: ServiceSite;
let session: CloudBrowserSession<import('playwright-core').Browser>;
let page: Page;
let client: Client;

beforeAll(async () => {
  emulator = await startEmulator();
  site = await startServiceSite({
    '/form': FORM,
    '/second': '<!doctype html><title>second</title><p>the second page</p>',
    '/report.txt': {
      type: 'text/plain',
      body: 'quarterly numbers',
      headers: { 'content-disposition': 'attachment; filename="report.txt"' },
    },
  });
  session = await connectPlaywright(chromium, {
    browser_url: emulator.browserUrl,
    api_key: emulator.apiKey,
    enable_mcp: true,
  });
  const context = session.browser.contexts()[0];
  if (!context) throw new Error('no default context');
  page = await context.newPage();
  client = new Client({ name: 'tools-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(session.mcpEndpoint as string), {
      requestInit: { headers: { Authorization: `Bearer ${emulator.apiKey}` } },
    }),
  );
});
afterAll(async () => {
  await client?.close();
  await session?.close();
  await emulator?.close();
  await site?.close();
});

async function call(name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as {
    content: { type: string; text?: string }[];
    isError?: boolean;
  };
  return { isError: result.isError === true, text: result.content.map((c) => c.text ?? '').join('\n') };
}

const refOf = (snapshot: string, pattern: string) => new RegExp(`${pattern} \\[ref=(\\w+)\\]`).exec(snapshot)?.[1];

describe('the MCP tools', () => {
  it('hovers, selects, types with submit and presses keys on the page', async () => {
    const { text } = await call('browser_navigate', { url: `${site.url}/form` });
    await call('browser_hover', { target: '#tip' });
    expect(await page.textContent('#tip')).toBe('hovered');
    const size = await call('browser_select_option', { target: refOf(text, 'combobox "Size"'), values: ['Large'] });
    expect(size.isError).toBe(false);
    expect(await page.inputValue('#size')).toBe('l');
    await call('browser_type', { target: refOf(text, 'textbox "Note"'), text: 'by noon', submit: true });
    expect(await page.title()).toBe('submitted by noon');
    await call('browser_press_key', { key: 'ArrowLeft' });
    expect(await page.textContent('#keys')).toContain('ArrowLeft');
  });

  it('evaluates on the page and on an element, and waits for text and for a selector', async () => {
    await call('browser_navigate', { url: `${site.url}/form` });
    expect((await call('browser_evaluate', { function: '() => document.title' })).text).toContain('"form"');
    expect((await call('browser_evaluate', { function: '(el) => el.id', target: '#tip' })).text).toContain('"tip"');
    const waited = await call('browser_wait_for', { text: 'arrived late', time: 5 });
    expect(waited.isError).toBe(false);
    expect(waited.text).toContain('arrived late');
    expect((await call('browser_wait_for', { selector: 'p.late' })).isError).toBe(false);
    const never = await call('browser_wait_for', { text: 'never there', time: 0.3 });
    expect(never.isError).toBe(true);
    expect((await call('browser_wait_for', {})).text).toContain('give time, text, textGone or selector');
  });

  it('opens, lists, selects and closes tabs, and goes back', async () => {
    await call('browser_navigate', { url: `${site.url}/form` });
    await call('browser_navigate', { url: `${site.url}/second` });
    const back = await call('browser_navigate_back');
    expect(back.text).toContain(`${site.url}/form`);
    const opened = await call('browser_tabs', { action: 'new', url: `${site.url}/second` });
    expect(opened.text).toMatch(/\(current\) \[second\]/);
    const listed = await call('browser_tabs', { action: 'list' });
    const count = listed.text.split('\n').filter((l) => l.startsWith('- ')).length;
    const formTab = /- (\d+): \[form\]/.exec(listed.text)?.[1];
    const selected = await call('browser_tabs', { action: 'select', index: Number(formTab) });
    expect(selected.text).toMatch(/\(current\) \[form\]/);
    const closed = await call('browser_tabs', { action: 'close', index: count - 1 });
    expect(closed.text.split('\n').filter((l) => l.startsWith('- '))).toHaveLength(count - 1);
    expect((await call('browser_tabs', { action: 'select', index: 99 })).text).toContain('no tab 99');
  });

  it("lists the remote browser's downloads and reads one; lists the captcha records", async () => {
    const { text } = await call('browser_navigate', { url: `${site.url}/form` });
    await call('browser_click', { target: refOf(text, 'link "report"') });
    let listed = '';
    for (let i = 0; i < 50 && !listed.includes('report.txt'); i++) {
      listed = (await call('browser_downloads')).text;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(JSON.parse(listed)).toEqual({ 'report.txt': 17 });
    const got = await call('browser_downloads', { action: 'get', filename: 'report.txt' });
    expect(got.text).toContain('quarterly numbers');
    expect((await call('browser_downloads', { action: 'get' })).text).toContain('get needs filename');
    expect(JSON.parse((await call('browser_captchas')).text)).toEqual([]);
  });

  it('answers a wrong argument with what is wrong, and an unknown tool by name', async () => {
    expect((await call('browser_tabs', { action: 'flip' })).text).toContain(
      'action must be one of list, new, close, select',
    );
    expect((await call('browser_wait_for', { time: Number.MAX_VALUE })).text).toContain('time must be at most 60');
    expect((await call('browser_click')).text).toContain('name the element');
    expect((await call('browser_fly')).text).toContain('no tool named browser_fly');
  });
});

describe('the argument check', () => {
  const schema = {
    type: 'object' as const,
    properties: {
      n: { type: 'number' as const, minimum: 0, maximum: 10 },
      list: { type: 'array' as const, items: { type: 'string' as const } },
      flag: { type: 'boolean' as const },
    },
    required: ['n'],
  };
  it.each([
    [{}, 'n is required'],
    [{ n: Number.NaN }, 'n must be a finite number'],
    [{ n: Number.POSITIVE_INFINITY }, 'n must be a finite number'],
    [{ n: -1 }, 'n must be at least 0'],
    [{ n: 1, list: ['a', 2] }, 'list[1] must be a string'],
    [{ n: 1, list: 'a' }, 'list must be an array'],
    [{ n: 1, flag: 'yes' }, 'flag must be true or false'],
    [[], 'arguments must be an object'],
  ])('%j: %s', (value, problem) => {
    expect(argsProblem(schema, value)).toBe(problem);
  });
  it('accepts what the schema describes, and ignores what it does not', () => {
    expect(argsProblem(schema, { n: 10, list: ['a'], flag: false, extra: 1 })).toBeUndefined();
  });
});
