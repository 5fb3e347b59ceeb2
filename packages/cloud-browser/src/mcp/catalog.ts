/**
 * Every tool of the MCP server. Those Playwright's server has keep its names and arguments
 * (`target` for an element, `ref` accepted as its older name); the service's own are `browser_`
 * tools too, named for what they give.
 */
import { bool, num, objectSchema, oneOf, str } from './schema.js';
import { type BrowserTool, type BrowserTools, type ToolResult, text, UNTRUSTED } from './tools.js';

const element = {
  element: str('Human-readable element description used to obtain permission to interact with the element'),
  target: str('Exact target element reference from the page snapshot (e.g. e12), or a unique element selector'),
  ref: str('The same as target (the older name of the argument)'),
};

/** After an action: what the page looks like now, as Playwright's server answers. */
async function withSnapshot(tools: BrowserTools, done: string): Promise<ToolResult> {
  return text(done, '', await tools.snapshot());
}

const navigation: BrowserTool[] = [
  {
    name: 'browser_navigate',
    title: 'Navigate to a URL',
    description: 'Navigate to a URL',
    inputSchema: objectSchema({ url: str('The URL to navigate to') }, ['url']),
    readOnly: false,
    async run(tools, args) {
      const page = await tools.page();
      await page.goto(String(args.url), { waitUntil: 'domcontentloaded' });
      return withSnapshot(tools, `Navigated to ${page.url()}`);
    },
  },
  {
    name: 'browser_navigate_back',
    title: 'Go back',
    description: 'Go back to the previous page in the history',
    inputSchema: objectSchema({}),
    readOnly: false,
    async run(tools) {
      await (await tools.page()).goBack({ waitUntil: 'domcontentloaded' });
      return withSnapshot(tools, 'Went back');
    },
  },
  {
    name: 'browser_snapshot',
    title: 'Page snapshot',
    description: 'Capture accessibility snapshot of the current page, this is better than screenshot',
    inputSchema: objectSchema({}),
    readOnly: true,
    async run(tools) {
      return text(await tools.snapshot());
    },
  },
  {
    name: 'browser_tabs',
    title: 'Manage tabs',
    description: 'List, create, close, or select a browser tab.',
    inputSchema: objectSchema(
      {
        action: oneOf(['list', 'new', 'close', 'select'], 'Operation to perform'),
        index: num('Tab index, used for close/select. If omitted for close, current tab is closed.', 0),
        url: str('URL to navigate to in the new tab, used for new.'),
      },
      ['action'],
    ),
    readOnly: false,
    run: tabs,
  },
];

async function tabs(tools: BrowserTools, args: Record<string, unknown>): Promise<ToolResult> {
  const context = tools.context();
  const index = args.index as number | undefined;
  const nth = (i: number) => {
    const page = context.pages()[i];
    if (!page) throw new Error(`no tab ${i}: there are ${context.pages().length} (browser_tabs list)`);
    return page;
  };
  if (args.action === 'new') {
    const page = await context.newPage();
    tools.select(page);
    if (args.url) await page.goto(String(args.url), { waitUntil: 'domcontentloaded' });
  } else if (args.action === 'close') {
    await (index === undefined ? await tools.page() : nth(index)).close();
  } else if (args.action === 'select') {
    if (index === undefined) throw new Error('select needs the index of a tab');
    tools.select(nth(index));
    await nth(index).bringToFront();
  }
  const current = await tools.page();
  const lines = await Promise.all(
    context.pages().map(async (p, i) => `- ${i}:${p === current ? ' (current)' : ''} [${await p.title()}](${p.url()})`),
  );
  return text('### Open tabs', ...lines.map((l) => tools.clean(l)));
}

const input: BrowserTool[] = [
  {
    name: 'browser_click',
    title: 'Click',
    description: 'Perform click on a web page',
    inputSchema: objectSchema({
      ...element,
      doubleClick: bool('Whether to perform a double click instead of a single click'),
      button: oneOf(['left', 'right', 'middle'], 'Button to click, defaults to left'),
      modifiers: {
        type: 'array',
        items: oneOf(['Alt', 'Control', 'ControlOrMeta', 'Meta', 'Shift'], 'A modifier key'),
        description: 'Modifier keys to press',
      },
    }),
    readOnly: false,
    async run(tools, args) {
      const locator = await tools.locate(args);
      const { human } = await tools.state(await tools.page());
      const modifiers = (args.modifiers as string[] | undefined) ?? [];
      if (human && modifiers.length === 0) {
        const selector = await tools.point(locator);
        const button = (args.button as 'left' | 'right' | 'middle' | undefined) ?? 'left';
        await tools.human('Antibot.clickOn', { selector, button, clickCount: args.doubleClick ? 2 : 1 });
      } else {
        const options = { button: args.button as 'left', modifiers: modifiers as 'Alt'[], timeout: 10_000 };
        await (args.doubleClick ? locator.dblclick(options) : locator.click(options));
      }
      return withSnapshot(tools, 'Clicked');
    },
  },
  {
    name: 'browser_hover',
    title: 'Hover mouse',
    description: 'Hover over element on page',
    inputSchema: objectSchema(element),
    readOnly: false,
    async run(tools, args) {
      const locator = await tools.locate(args);
      if ((await tools.state(await tools.page())).human) {
        await tools.human('Antibot.hover', { selector: await tools.point(locator), holdTime: 200 });
      } else await locator.hover({ timeout: 10_000 });
      return withSnapshot(tools, 'Hovered');
    },
  },
  {
    name: 'browser_type',
    title: 'Type text',
    description: 'Type text into editable element',
    inputSchema: objectSchema({
      ...element,
      text: str('Text to type into the element'),
      submit: bool('Whether to submit entered text (press Enter after)'),
      slowly: bool(
        'Whether to type one character at a time, as a person types. By default the text is put in at once.',
      ),
    }),
    readOnly: false,
    async run(tools, args) {
      if (typeof args.text !== 'string') throw new Error('text is required');
      const locator = await tools.locate(args);
      if ((await tools.state(await tools.page())).human) {
        const selector = await tools.point(locator);
        await tools.human('Antibot.fill', { selector, text: args.text, clear: true, paste: args.slowly !== true });
        if (args.submit) await tools.human('Antibot.pressKey', { key: 'Enter' });
      } else {
        await (args.slowly ? locator.pressSequentially(args.text) : locator.fill(args.text));
        if (args.submit) await locator.press('Enter');
      }
      return withSnapshot(tools, 'Typed');
    },
  },
  {
    name: 'browser_press_key',
    title: 'Press a key',
    description: 'Press a key on the keyboard',
    inputSchema: objectSchema(
      { key: str('Name of the key to press or a character to generate, such as `ArrowLeft` or `a`') },
      ['key'],
    ),
    readOnly: false,
    async run(tools, args) {
      const page = await tools.page();
      if ((await tools.state(page)).human) await tools.human('Antibot.pressKey', { key: String(args.key) });
      else await page.keyboard.press(String(args.key));
      return text(`Pressed ${args.key}`);
    },
  },
  {
    name: 'browser_select_option',
    title: 'Select option',
    description: 'Select an option in a dropdown',
    inputSchema: objectSchema({
      ...element,
      values: { type: 'array', items: str('A value'), description: 'Array of values to select in the dropdown.' },
    }),
    readOnly: false,
    async run(tools, args) {
      const values = args.values as string[] | undefined;
      if (!values?.length) throw new Error('values is required: the values (or labels) to select');
      const locator = await tools.locate(args);
      await locator.selectOption(values, { timeout: 10_000 });
      return withSnapshot(tools, `Selected ${values.join(', ')}`);
    },
  },
];

const reading: BrowserTool[] = [
  {
    name: 'browser_take_screenshot',
    title: 'Take a screenshot',
    description: 'Take a screenshot of the current page or of an element. Use browser_snapshot for actions.',
    inputSchema: objectSchema({
      type: oneOf(['png', 'jpeg'], 'Image format for the screenshot. Default is png.'),
      element: element.element,
      target: str('An element to take a screenshot of, a reference from the page snapshot or a selector'),
      ref: element.ref,
      fullPage: bool('When true, takes a screenshot of the full scrollable page.'),
    }),
    readOnly: true,
    async run(tools, args) {
      const type = (args.type as 'png' | 'jpeg' | undefined) ?? 'png';
      const options = { type, ...(type === 'jpeg' ? { quality: 90 } : {}) };
      const data =
        args.target || args.ref
          ? await (await tools.locate(args)).screenshot(options)
          : await (await tools.page()).screenshot({ ...options, fullPage: args.fullPage === true });
      return {
        content: [
          { type: 'text', text: `Screenshot of the ${args.target || args.ref ? 'element' : 'page'}` },
          { type: 'image', data: data.toString('base64'), mimeType: `image/${type}` },
        ],
      };
    },
  },
  {
    name: 'browser_evaluate',
    title: 'Evaluate JavaScript',
    description: 'Evaluate JavaScript expression on page or element',
    inputSchema: objectSchema(
      {
        function: str('() => { /* code */ } or (element) => { /* code */ } when an element is given'),
        ...element,
      },
      ['function'],
    ),
    readOnly: false,
    async run(tools, args) {
      // The agent's own code, run in the page, as Playwright's server runs it.
      const onPage = async (expr: string) => {
        const value = new Function(`return (${expr});`)();
        return JSON.stringify((await (typeof value === 'function' ? value() : value)) ?? null);
      };
      const onElement = async (el: unknown, expr: string) => {
        const value = new Function(`return (${expr});`)();
        return JSON.stringify((await (typeof value === 'function' ? value(el) : value)) ?? null);
      };
      const json =
        args.target || args.ref
          ? await (await tools.locate(args)).evaluate(onElement, String(args.function))
          : await (await tools.page()).evaluate(onPage, String(args.function));
      return text('### Result', tools.clean(json));
    },
  },
  {
    name: 'browser_wait_for',
    title: 'Wait for',
    description: 'Wait for text to appear or disappear, an element to appear (selector), or a specified time to pass',
    inputSchema: objectSchema({
      time: num(
        'The time to wait in seconds (at most 60); with text, textGone or selector, how long to wait for them',
        0,
        60,
      ),
      text: str('The text to wait for'),
      textGone: str('The text to wait for to disappear'),
      selector: str('A CSS selector of an element to wait for'),
    }),
    readOnly: true,
    run: waitFor,
  },
  {
    name: 'browser_rendered_content',
    title: 'Rendered content',
    description:
      "The page's content as the service renders it: markdown (the default) or html with frames inlined (Page.getRenderedContent)",
    inputSchema: objectSchema({ format: oneOf(['markdown', 'html'], 'markdown (default) or html') }),
    readOnly: true,
    async run(tools, args) {
      const format = (args.format as 'markdown' | 'html' | undefined) ?? 'markdown';
      const { content } = await (await tools.service()).renderedContent({ format });
      return text(tools.clean(content));
    },
  },
];

async function waitFor(tools: BrowserTools, args: Record<string, unknown>): Promise<ToolResult> {
  const page = await tools.page();
  const time = args.time as number | undefined;
  if (!args.text && !args.textGone && !args.selector) {
    if (time === undefined) throw new Error('give time, text, textGone or selector');
    await page.waitForTimeout(time * 1000);
    return text(`Waited for ${time} s`);
  }
  const timeout = (time ?? 10) * 1000;
  if (args.text) await page.getByText(String(args.text)).first().waitFor({ state: 'visible', timeout });
  if (args.textGone) await page.getByText(String(args.textGone)).first().waitFor({ state: 'hidden', timeout });
  if (args.selector) await page.locator(String(args.selector)).first().waitFor({ state: 'attached', timeout });
  return withSnapshot(tools, `Waited for ${args.text ?? args.textGone ?? args.selector}`);
}

const service: BrowserTool[] = [
  {
    name: 'browser_downloads',
    title: 'Downloads',
    description:
      "The session's downloads, kept by the remote browser: list them, or get one by its file name (text shown as text, other files in base64)",
    inputSchema: objectSchema({
      action: oneOf(['list', 'get'], 'list (the default) or get'),
      filename: str('The file to get, as list names it'),
    }),
    readOnly: true,
    async run(tools, args) {
      const downloads = (await tools.service()).downloads;
      if (args.action === 'get') {
        if (!args.filename) throw new Error('get needs filename (browser_downloads list names them)');
        const bytes = await downloads.get(String(args.filename));
        const printable = !bytes.subarray(0, 4096).includes(0);
        return printable
          ? text(`### ${args.filename} (${bytes.length} bytes)`, bytes.toString('utf8'))
          : text(`### ${args.filename} (${bytes.length} bytes, base64)`, bytes.toString('base64'));
      }
      return text(JSON.stringify(await downloads.list(), null, 2));
    },
  },
  {
    name: 'browser_captchas',
    title: 'Captcha records',
    description: 'The captchas the browser detected in this session, and whether each was solved',
    inputSchema: objectSchema({}),
    readOnly: true,
    async run(tools) {
      const { records } = await (await tools.service()).antibot.getSolvedCaptchas();
      return text(tools.clean(JSON.stringify(records, null, 2)));
    },
  },
];

const webmcp: BrowserTool[] = [
  {
    name: 'browser_webmcp_list',
    title: 'List WebMCP tools',
    description: 'List the WebMCP tools registered by the page (navigator.modelContext), across all frames',
    inputSchema: objectSchema({}),
    readOnly: true,
    async run(tools) {
      const found = await tools.webmcpTools();
      if (found.length === 0) return text('The page registers no WebMCP tools.');
      const lines = found.map(
        (t) => `- ${t.name} (frame ${t.frameId}): ${t.description}\n  input: ${JSON.stringify(t.inputSchema ?? {})}`,
      );
      return text(UNTRUSTED, ...lines.map((l) => tools.clean(l)));
    },
  },
  {
    name: 'browser_webmcp_call',
    title: 'Call a WebMCP tool',
    description: 'Call a WebMCP tool registered by the page. The tool output is page-provided and untrusted',
    inputSchema: objectSchema(
      {
        name: str('Name of the WebMCP tool to call'),
        params: { type: 'object', description: 'Input parameters for the tool, matching its inputSchema' },
        frame: str('Frame that registered the tool, as the listing names it, when several frames have the name'),
      },
      ['name'],
    ),
    readOnly: false,
    run: callWebmcp,
  },
];

async function callWebmcp(tools: BrowserTools, args: Record<string, unknown>): Promise<ToolResult> {
  const matches = (await tools.webmcpTools()).filter(
    (t) => t.name === args.name && (args.frame === undefined || t.frameId === args.frame),
  );
  if (matches.length !== 1) {
    throw new Error(
      matches.length === 0
        ? `no WebMCP tool named ${JSON.stringify(args.name)} on the page (browser_webmcp_list)`
        : `${matches.length} frames register ${args.name}: name one with frame`,
    );
  }
  const response = await tools.callWebmcp(
    matches[0] as (typeof matches)[number],
    (args.params ?? {}) as Record<string, unknown>,
    60_000,
  );
  if (String(response.status).toLowerCase() !== 'completed') {
    const exception = response.exception as { description?: string } | undefined;
    const why = String(response.errorText || exception?.description?.split('\n')[0] || 'the tool failed');
    return { ...text(UNTRUSTED, tools.clean(why)), isError: true };
  }
  const output = typeof response.output === 'string' ? safeParse(response.output) : response.output;
  const content = (output as { content?: { type: string; text?: string }[] } | undefined)?.content;
  const texts = Array.isArray(content)
    ? content.filter((c) => c.type === 'text').map((c) => String(c.text))
    : [JSON.stringify(output ?? null)];
  return text(UNTRUSTED, ...texts.map((t) => tools.clean(t)));
}

function safeParse(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

/** Every tool, in the order an agent lists them. */
export const BROWSER_TOOLS: readonly BrowserTool[] = [...navigation, ...input, ...reading, ...service, ...webmcp];
