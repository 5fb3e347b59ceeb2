/**
 * WebMCP through real Playwright and Puppeteer against the emulator: a page registers tools
 * through `navigator.modelContext`, a client lists them over the `WebMCP` domain, calls one and
 * hears its answer. Chromium 156 answers the domain itself; an older one (the fresh machine's
 * @sparticuz/chromium) gets the emulator's: the same test holds on both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { eventually } from '../support/drivers.js';
import { serviceDrivers } from '../support/service-drivers.js';
import { type ServiceSite, startServiceSite } from '../support/service-site.js';
import { TOOLS_PAGE } from '../support/webmcp-page.js';

let emulator: Emulator;
let site: ServiceSite;

beforeAll(async () => {
  emulator = await startEmulator();
  site = await startServiceSite({ '/tools': TOOLS_PAGE, '/plain': '<!doctype html><title>plain</title>' });
});
afterAll(async () => {
  await emulator?.close();
  await site?.close();
});

type Heard = { event: string; params: Record<string, unknown> };

describe.each(serviceDrivers)('$name', (driver) => {
  it('lists the tools a page registered, calls one, hears toolInvoked and toolResponded, and loses them on leaving', async () => {
    const { session, page } = await driver.open({ browser_url: emulator.browserUrl, api_key: emulator.apiKey });
    try {
      await page.goto(`${site.url}/tools`);
      const cdp = await page.cdp();
      // A second session on the page that never enables the domain hears none of its events.
      const quiet = await page.cdp();
      const heard: Heard[] = [];
      const overheard: string[] = [];
      for (const event of ['WebMCP.toolsAdded', 'WebMCP.toolsRemoved', 'WebMCP.toolInvoked', 'WebMCP.toolResponded']) {
        cdp.on(event, (params: never) => heard.push({ event, params }));
        quiet.on(event, () => overheard.push(event));
      }
      await cdp.send('WebMCP.enable');
      const tools = () =>
        heard
          .filter((h) => h.event === 'WebMCP.toolsAdded')
          .flatMap((h) => h.params.tools as Record<string, unknown>[]);
      await eventually(
        () => tools().length,
        (n) => n >= 2,
      );
      const add = tools().find((t) => t.name === 'add');
      expect(add).toMatchObject({
        name: 'add',
        description: 'Adds two numbers',
        inputSchema: { type: 'object', required: ['a', 'b'] },
      });
      expect(typeof add?.frameId).toBe('string');

      const { invocationId } = (await cdp.send('WebMCP.invokeTool', {
        toolName: 'add',
        frameId: add?.frameId,
        input: { a: 2, b: 3 },
      })) as { invocationId: string };
      await eventually(
        () => heard.find((h) => h.event === 'WebMCP.toolResponded' && h.params.invocationId === invocationId),
        (h) => h !== undefined,
      );
      const responded = heard.find((h) => h.event === 'WebMCP.toolResponded')?.params;
      expect(String(responded?.status).toLowerCase()).toBe('completed');
      const output = typeof responded?.output === 'string' ? JSON.parse(responded.output) : responded?.output;
      expect(output).toEqual({ content: [{ type: 'text', text: '5' }] });
      expect(heard.some((h) => h.event === 'WebMCP.toolInvoked' && h.params.invocationId === invocationId)).toBe(true);
      expect(await page.evaluate('document.getElementById("out").textContent')).toBe('added 5');

      const failed = (await cdp.send('WebMCP.invokeTool', {
        toolName: 'fail',
        frameId: add?.frameId,
        input: {},
      })) as { invocationId: string };
      await eventually(
        () => heard.find((h) => h.event === 'WebMCP.toolResponded' && h.params.invocationId === failed.invocationId),
        (h) => h !== undefined,
      );
      const error = heard.find(
        (h) => h.params.invocationId === failed.invocationId && h.event === 'WebMCP.toolResponded',
      );
      expect(String(error?.params.status).toLowerCase()).toBe('error');
      // Chromium's own domain leaves errorText empty and names the error in `exception`.
      const exception = error?.params.exception as { description?: string } | undefined;
      expect(String(error?.params.errorText || exception?.description)).toContain('it failed on purpose');

      await page.goto(`${site.url}/plain`);
      await eventually(
        () =>
          heard.filter((h) => h.event === 'WebMCP.toolsRemoved').flatMap((h) => h.params.tools as { name: string }[]),
        (gone) => gone.some((t) => t.name === 'add'),
      );
      expect(overheard).toEqual([]);
    } finally {
      await session.close();
    }
  });
});
