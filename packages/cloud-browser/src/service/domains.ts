/**
 * The service browser's own DevTools domains (docs/wire.md §10, docs/decisions.md D25): every
 * command's parameters and answer and every event, described once. The connectors' types, their
 * parameter checks, the emulator's protocol errors and the tests' shape checks all read this.
 * Where the protocol shows a name but not its unit, docs/decisions.md D28 says what we chose.
 */
import {
  array,
  boolean,
  command,
  type Infer,
  number,
  object,
  oneOf,
  optional,
  record,
  type Shape,
  string,
} from './shape.js';

/** How a target is named: `css`, `xpath`, `axNodeId`, `coord` (`"x,y"`), `role` (`role` or `role|name`), `bottom`. */
export const SELECTOR_TYPES = ['css', 'xpath', 'axNodeId', 'coord', 'role', 'bottom'] as const;
export const MOUSE_BUTTONS = ['left', 'right', 'middle'] as const;
/** What a captcha is, as the service names it (the list grows). */
export const CAPTCHA_TYPES = [
  'turnstile_checkbox',
  'turnstile',
  'datadome_slider',
  'datadome',
  'recaptcha',
  'geetest',
  'perimeterx_hold',
] as const;
/** How a captcha was solved. */
export const CAPTCHA_METHODS = ['checkbox', 'slider', 'hold', 'token', 'managed', 'coords'] as const;
export const CAPTCHA_STATUSES = ['solved', 'failed', 'pending'] as const;
/** The largest file the downloads domain reads back, bytes. */
export const MAX_DOWNLOAD_BYTES = 100 * 1024 * 1024;

const selector = object({ type: oneOf(SELECTOR_TYPES), query: string() });
const coordinate = object({ x: number(), y: number() });
/** A point inside an element's box, as fractions of its width and height (0 to 1). */
const relative = object({ x: number({ min: 0, max: 1 }), y: number({ min: 0, max: 1 }) });
const ms = (max = 600_000) => optional(number({ min: 0, max }));
const button = optional(oneOf(MOUSE_BUTTONS));
const done = { success: boolean(), errorMessage: optional(string()) };
const located = {
  ...done,
  pointX: optional(number()),
  pointY: optional(number()),
  boundsX: optional(number()),
  boundsY: optional(number()),
  boundsWidth: optional(number()),
  boundsHeight: optional(number()),
};
/** Any JSON value (a tool's input). */
const anyValue: Shape<unknown> & { optional: false } = {
  expects: 'a JSON value',
  optional: false,
  check: () => undefined,
};
const captchaType = oneOf(CAPTCHA_TYPES);
const captchaMethod = oneOf(CAPTCHA_METHODS);
const captchaRecord = object({
  detectionId: string(),
  type: captchaType,
  frameUrl: string(),
  status: oneOf(CAPTCHA_STATUSES),
  detectedAt: number(),
  method: optional(captchaMethod),
  resolvedAt: optional(number()),
  errorMessage: optional(string()),
});
const frameInfo = object({
  frameId: string(),
  url: string(),
  origin: string(),
  frameName: string(),
  isMainFrame: boolean(),
  isOopif: boolean(),
});
const webMcpTool = object({
  name: string(),
  description: string(),
  inputSchema: optional(record(anyValue)),
  annotations: optional(object({ readOnly: optional(boolean()), untrustedContent: optional(boolean()) })),
  frameId: string(),
});

/** Every command of the service's own domains. */
export const SERVICE_COMMANDS = {
  'Antibot.moveTo': command(
    {
      selector,
      relativePosition: optional(relative),
      absoluteOffset: optional(coordinate),
      steady: optional(boolean()),
    },
    done,
  ),
  'Antibot.clickOn': command(
    {
      selector,
      relativePosition: optional(relative),
      button,
      clickDuration: ms(10_000),
      clickCount: optional(number({ int: true, min: 1, max: 3 })),
    },
    done,
  ),
  'Antibot.hover': command({ selector, relativePosition: optional(relative), holdTime: ms() }, done),
  'Antibot.dragAndDrop': command(
    {
      from: selector,
      to: selector,
      fromRelativePosition: optional(relative),
      toRelativePosition: optional(relative),
    },
    done,
  ),
  'Antibot.clickAndHold': command(
    { selector, relativePosition: optional(relative), holdTime: ms(), button, frameUrl: optional(string()) },
    done,
  ),
  'Antibot.clickAndSlide': command(
    {
      selector,
      relativePosition: optional(relative),
      distance: optional(number({ min: -10_000, max: 10_000 })),
      target: optional(selector),
      targetRelativePosition: optional(relative),
      verticalOffset: optional(number({ min: -10_000, max: 10_000 })),
      button,
      frameUrl: optional(string()),
      overshoot: optional(boolean()),
    },
    done,
  ),
  'Antibot.scroll': command(
    { selector: optional(selector), delta: optional(number({ min: -1_000_000, max: 1_000_000 })) },
    { ...done, atBottom: optional(boolean()) },
  ),
  'Antibot.typeText': command({ text: string(), wpm: optional(number({ min: 1, max: 3000 })) }, done),
  'Antibot.fill': command(
    {
      selector,
      text: string(),
      relativePosition: optional(relative),
      clear: optional(boolean()),
      wpm: optional(number({ min: 1, max: 3000 })),
      paste: optional(boolean()),
    },
    done,
  ),
  'Antibot.pressKey': command({ key: string() }, done),
  'Antibot.selectOption': command(
    {
      selector,
      value: optional(string()),
      text: optional(string()),
      index: optional(number({ int: true, min: 0 })),
      optionSelector: optional(selector),
    },
    { ...done, selectedValue: optional(string()), selectedText: optional(string()) },
  ),
  'Antibot.showCursor': command({}, done),
  'Antibot.getFrames': command({}, { frames: array(frameInfo) }),
  'Antibot.locateElement': command({ frameId: string(), selector, relativePosition: optional(relative) }, located),
  'Antibot.locateElementAcrossFrames': command({ selector, relativePosition: optional(relative) }, located),
  'Antibot.waitForElement': command(
    { selector, timeout: ms(), visible: optional(boolean()) },
    { ...done, frameId: optional(string()) },
  ),
  'Antibot.isElementVisible': command(
    { selector },
    { visible: boolean(), exists: optional(boolean()), reason: optional(string()) },
  ),
  'Antibot.getMousePosition': command({}, { ...done, x: number(), y: number() }),
  'Antibot.performAction': command(
    { axNodeId: string(), action: string(), frameId: optional(string()), metadata: optional(record(string())) },
    done,
  ),
  'Antibot.findAndPerformAction': command(
    { selector, action: string(), name: optional(string()), frameUrl: optional(string()) },
    { ...done, foundNodeId: optional(string()), foundRole: optional(string()), foundName: optional(string()) },
  ),
  'Antibot.disable': command({}, {}),
  'Antibot.captchaEnable': command({}, {}),
  'Antibot.captchaDisable': command({}, {}),
  'Antibot.getSolvedCaptchas': command({}, { records: array(captchaRecord) }),
  'Antibot.solveCaptcha': command(
    { detectionId: optional(string()), timeout: optional(number({ min: 1, max: 600 })) },
    { detectionId: string(), type: captchaType, method: captchaMethod, token: optional(string()) },
  ),
  'ScrapiumBrowser.hasDownloads': command({}, { result: boolean() }),
  'ScrapiumBrowser.getDownloadsMetadatas': command({}, { metadata: record(number({ int: true, min: 0 })) }),
  'ScrapiumBrowser.getDownload': command({ filename: string() }, { data: string() }),
  'ScrapiumBrowser.getDownloads': command({ delete: optional(boolean()) }, { files: record(string()) }),
  'Page.getRenderedContent': command(
    { renderIframe: optional(boolean()), format: optional(oneOf(['html', 'markdown'])) },
    { content: string(), type: oneOf(['text', 'markdown', 'binary']) },
  ),
  'WebMCP.enable': command({}, {}),
  'WebMCP.disable': command({}, {}),
  'WebMCP.invokeTool': command(
    { toolName: string(), frameId: string(), input: record(anyValue) },
    {
      invocationId: string(),
    },
  ),
  'WebMCP.cancelInvocation': command({ invocationId: string() }, {}),
} as const;

/** Every event of the service's own domains. */
export const SERVICE_EVENTS = {
  'Antibot.captchaDetected': object({
    detectionId: string(),
    type: captchaType,
    frameUrl: string(),
    siteKey: optional(string()),
    captchaUrl: optional(string()),
  }),
  'Antibot.captchaSolvingStarted': object({ detectionId: string(), type: captchaType, method: captchaMethod }),
  'Antibot.captchaSolved': object({
    detectionId: string(),
    type: captchaType,
    method: captchaMethod,
    token: optional(string()),
  }),
  'Antibot.captchaError': object({ detectionId: string(), type: captchaType, errorMessage: string() }),
  'WebMCP.toolsAdded': object({ tools: array(webMcpTool) }),
  'WebMCP.toolsRemoved': object({ tools: array(webMcpTool) }),
  'WebMCP.toolInvoked': object({ invocationId: string(), toolName: string() }),
  'WebMCP.toolResponded': object({
    invocationId: string(),
    status: oneOf(['completed', 'error']),
    output: optional(string()),
    errorText: optional(string()),
  }),
} as const;

type Commands = typeof SERVICE_COMMANDS;
type Events = typeof SERVICE_EVENTS;

/** A command's name. */
export type ServiceCommand = keyof Commands;
/** A command's parameters. */
export type ServiceParams<M extends ServiceCommand> = Infer<Commands[M]['params']>;
/** A command's answer. */
export type ServiceResult<M extends ServiceCommand> = Infer<Commands[M]['result']>;
/** An event's name. */
export type ServiceEvent = keyof Events;
/** An event's parameters. */
export type ServiceEventParams<E extends ServiceEvent> = Infer<Events[E]>;
/** A target as Antibot names it. */
export type AntibotSelector = Infer<typeof selector>;
/** One captcha as `getSolvedCaptchas` keeps it. */
export type CaptchaRecord = Infer<typeof captchaRecord>;
/** One frame as `getFrames` lists it. */
export type FrameInfo = Infer<typeof frameInfo>;

/** Whether `method` belongs to the service's own domains. */
export function isServiceCommand(method: string): method is ServiceCommand {
  return Object.hasOwn(SERVICE_COMMANDS, method);
}

/**
 * What is wrong with `params` for `method`, as Chromium words a parameter error; undefined when
 * they are right.
 */
export function paramsProblem(method: ServiceCommand, params: unknown): string | undefined {
  return SERVICE_COMMANDS[method].params.check(params ?? {}, '', false);
}
