/**
 * WebMCP where the session's Chromium has no such domain (docs/decisions.md D31): pages get
 * `navigator.modelContext` (and `document.modelContext`, where Chromium puts its own) to register
 * tools with a name, a description, an input schema and an async `execute`, as the WebMCP
 * proposal defines it; clients get the `WebMCP` domain (`enable`, `disable`, `invokeTool`,
 * `cancelInvocation`; `toolsAdded`, `toolsRemoved`, `toolInvoked`, `toolResponded`) with the
 * shapes of docs/wire.md §10. A Chromium that has the domain is left alone: its own answers go
 * through untouched.
 */
import type { ServiceEventParams, ServiceParams } from 'cloud-browser';
import type { CdpClient } from '../cdp.js';
import type { Emit } from './captchas.js';
import type { Targets } from './targets.js';

/** The binding the page's script reports through (registrations, answers). */
const BINDING = '__cloudBrowserWebMCP';

// In the page's own world, before its scripts: the page's side of WebMCP. A tool's `execute`
// runs when the emulator calls `invoke`; what it returns (or throws) goes back by the binding.
const PAGE_SCRIPT = `(() => {
  if (globalThis.__cloudBrowserWebMCPInstalled || typeof ${BINDING} !== 'function') return;
  globalThis.__cloudBrowserWebMCPInstalled = true;
  const report = ${BINDING};
  delete globalThis.${BINDING};
  const tools = new Map();
  const running = new Map();
  const described = (t) => ({
    name: t.name,
    description: t.description,
    ...(t.inputSchema !== undefined ? { inputSchema: typeof t.inputSchema === 'string' ? JSON.parse(t.inputSchema) : t.inputSchema } : {}),
    ...(t.annotations !== undefined ? { annotations: t.annotations } : {}),
  });
  const send = (message) => report(JSON.stringify(message));
  const check = (tool) => {
    if (!tool || typeof tool !== 'object') throw new TypeError('registerTool: a tool is an object');
    if (typeof tool.name !== 'string' || tool.name === '') throw new TypeError('registerTool: the tool needs a name');
    if (typeof tool.description !== 'string') throw new TypeError('registerTool: the tool needs a description');
    if (typeof tool.execute !== 'function') throw new TypeError('registerTool: the tool needs an execute function');
  };
  const unregister = (name) => {
    if (!tools.delete(name)) return;
    send({ type: 'removed', names: [name] });
  };
  const context = {
    registerTool(tool, options) {
      check(tool);
      if (tools.has(tool.name)) throw new DOMException('a tool named ' + tool.name + ' is already registered', 'InvalidStateError');
      tools.set(tool.name, tool);
      send({ type: 'added', tools: [described(tool)] });
      options?.signal?.addEventListener('abort', () => unregister(tool.name), { once: true });
      return { unregister: () => unregister(tool.name) };
    },
    unregisterTool(name) { unregister(String(name)); },
    provideContext(ctx = {}) {
      context.clearContext();
      for (const tool of ctx.tools ?? []) context.registerTool(tool);
    },
    clearContext() {
      const names = [...tools.keys()];
      tools.clear();
      if (names.length) send({ type: 'removed', names });
    },
    async getTools() { return [...tools.values()].map(described); },
    async executeTool(tool, input) {
      const t = tools.get(typeof tool === 'string' ? tool : tool?.name);
      if (!t) throw new Error('no tool named ' + (tool?.name ?? tool));
      return t.execute(typeof input === 'string' ? JSON.parse(input) : input ?? {}, { requestUserInteraction: async (cb) => cb() });
    },
  };
  Object.defineProperty(globalThis, '__cloudBrowserWebMCPInvoke', {
    value: (id, name, inputJson) => {
      const tool = tools.get(name);
      if (!tool) { send({ type: 'responded', id, status: 'error', errorText: 'no tool named ' + name + ' is registered in this frame' }); return; }
      let cancelled = false;
      running.set(id, () => { cancelled = true; });
      Promise.resolve()
        .then(() => tool.execute(JSON.parse(inputJson), { requestUserInteraction: async (cb) => cb() }))
        .then(
          (value) => { if (!cancelled) send({ type: 'responded', id, status: 'completed', output: JSON.stringify(value ?? null) }); },
          (error) => { if (!cancelled) send({ type: 'responded', id, status: 'error', errorText: String(error?.message ?? error) }); },
        )
        .finally(() => running.delete(id));
    },
  });
  Object.defineProperty(globalThis, '__cloudBrowserWebMCPCancel', {
    value: (id) => {
      const cancel = running.get(id);
      if (!cancel) return false;
      cancel();
      running.delete(id);
      return true;
    },
  });
  const getter = { get: () => context, configurable: true, enumerable: true };
  Object.defineProperty(Navigator.prototype, 'modelContext', getter);
  if (!('modelContext' in Document.prototype)) Object.defineProperty(Document.prototype, 'modelContext', getter);
})()`;

// Where Chromium has its own WebMCP (on document.modelContext), pages find it on navigator too.
const NATIVE_ALIAS = `(() => {
  if (!('modelContext' in Navigator.prototype) && 'modelContext' in Document.prototype) {
    Object.defineProperty(Navigator.prototype, 'modelContext', { get: () => document.modelContext, configurable: true, enumerable: true });
  }
})()`;

type Tool = ServiceEventParams<'WebMCP.toolsAdded'>['tools'][number];

interface FrameTools {
  /** The frame's document's default execution context, and the control session it lives on. */
  contextId: number;
  session: string;
  tools: Map<string, Tool>;
}

interface Invocation {
  frameId: string;
  toolName: string;
}

/** One session's WebMCP: its pages' tools, their invocations. */
export class WebMcp {
  /** Whether Chromium answers the domain itself (then the emulator only adds the navigator alias). */
  native: boolean | undefined;
  private readonly frames = new Map<string, FrameTools>();
  private readonly contexts = new Map<string, { frameId: string; session: string }>();
  private readonly invocations = new Map<string, Invocation>();
  private next = 0;

  constructor(
    private readonly control: CdpClient,
    private readonly targets: Targets,
    private readonly emit: Emit,
  ) {
    control.on('Runtime.executionContextCreated', (params, session) => {
      const context = params.context as { id: number; auxData?: { frameId?: string; isDefault?: boolean } };
      const frameId = context.auxData?.frameId;
      if (session === undefined || !frameId || !context.auxData?.isDefault) return;
      this.contexts.set(`${session}:${context.id}`, { frameId, session });
      this.dropFrame(frameId);
    });
    control.on('Runtime.executionContextDestroyed', (params, session) => {
      const key = `${session}:${params.executionContextId as number}`;
      const gone = this.contexts.get(key);
      this.contexts.delete(key);
      if (gone && this.frames.get(gone.frameId)?.contextId === (params.executionContextId as number)) {
        this.dropFrame(gone.frameId);
      }
    });
    control.on('Runtime.bindingCalled', (params, session) => {
      if (params.name !== BINDING || session === undefined) return;
      this.reported(session, params.executionContextId as number, String(params.payload));
    });
  }

  /** Whether Chromium has the domain, asked once on the first page. */
  async probe(session: string): Promise<boolean> {
    if (this.native === undefined) {
      this.native = await this.control.send('WebMCP.disable', {}, session).then(
        () => true,
        () => false,
      );
    }
    return this.native;
  }

  /** A page or frame target, before it runs: the page's side of WebMCP on each of its documents. */
  async prepare(session: string): Promise<void> {
    if (await this.probe(session)) {
      await this.control.send('Page.addScriptToEvaluateOnNewDocument', { source: NATIVE_ALIAS }, session);
      return;
    }
    await this.control.send('Runtime.enable', {}, session);
    await this.control.send('Runtime.addBinding', { name: BINDING }, session);
    await this.control.send(
      'Page.addScriptToEvaluateOnNewDocument',
      { source: PAGE_SCRIPT, runImmediately: true },
      session,
    );
  }

  /** Every tool registered on `page`'s frames, out-of-process ones included. */
  toolsOf(page: string): Tool[] {
    const sessions = new Set([page, ...this.targets.framesUnder(page).map((f) => f.session)]);
    return [...this.frames.values()].filter((f) => sessions.has(f.session)).flatMap((f) => [...f.tools.values()]);
  }

  async invoke(page: string, params: ServiceParams<'WebMCP.invokeTool'>): Promise<{ invocationId: string }> {
    const frame = this.frames.get(params.frameId);
    if (!frame || !this.toolsOf(page).some((t) => t.frameId === params.frameId)) {
      throw new Error(
        `no frame ${params.frameId} of this page has registered tools (WebMCP.toolsAdded names each tool's frameId)`,
      );
    }
    if (!frame.tools.has(params.toolName)) {
      throw new Error(`no tool named ${JSON.stringify(params.toolName)} in frame ${params.frameId}`);
    }
    const invocationId = `webmcp-${++this.next}`;
    this.invocations.set(invocationId, { frameId: params.frameId, toolName: params.toolName });
    this.emit(page, 'WebMCP.toolInvoked', { invocationId, toolName: params.toolName });
    const call = `__cloudBrowserWebMCPInvoke(${JSON.stringify(invocationId)}, ${JSON.stringify(params.toolName)}, ${JSON.stringify(JSON.stringify(params.input))})`;
    await this.control.send('Runtime.evaluate', { expression: call, contextId: frame.contextId }, frame.session);
    return { invocationId };
  }

  async cancel(page: string, invocationId: string): Promise<void> {
    const invocation = this.invocations.get(invocationId);
    const frame = invocation && this.frames.get(invocation.frameId);
    if (!invocation || !frame) throw new Error(`no invocation ${invocationId} is running`);
    this.invocations.delete(invocationId);
    await this.control
      .send(
        'Runtime.evaluate',
        { expression: `__cloudBrowserWebMCPCancel(${JSON.stringify(invocationId)})`, contextId: frame.contextId },
        frame.session,
      )
      .catch(() => {});
    this.emit(page, 'WebMCP.toolResponded', {
      invocationId,
      status: 'error',
      errorText: 'the invocation was cancelled',
    });
  }

  private reported(session: string, contextId: number, payload: string): void {
    const where = this.contexts.get(`${session}:${contextId}`);
    const page = this.targets.pageOf(session)?.session;
    if (!where || !page) return;
    let message: { type: string; tools?: Omit<Tool, 'frameId'>[]; names?: string[]; id?: string } & Record<
      string,
      unknown
    >;
    try {
      message = JSON.parse(payload);
    } catch {
      return;
    }
    let frame = this.frames.get(where.frameId);
    if (!frame || frame.contextId !== contextId) {
      frame = { contextId, session, tools: new Map() };
      this.frames.set(where.frameId, frame);
    }
    if (message.type === 'added') {
      const tools = (message.tools ?? []).map((t) => ({ ...t, frameId: where.frameId }));
      for (const t of tools) frame.tools.set(t.name, t);
      this.emit(page, 'WebMCP.toolsAdded', { tools });
    } else if (message.type === 'removed') {
      const tools = (message.names ?? []).flatMap((n) => {
        const t = frame.tools.get(n);
        frame.tools.delete(n);
        return t ? [t] : [];
      });
      if (tools.length) this.emit(page, 'WebMCP.toolsRemoved', { tools });
    } else if (message.type === 'responded' && typeof message.id === 'string' && this.invocations.delete(message.id)) {
      this.emit(page, 'WebMCP.toolResponded', {
        invocationId: message.id,
        status: message.status === 'completed' ? 'completed' : 'error',
        ...(typeof message.output === 'string' ? { output: message.output } : {}),
        ...(typeof message.errorText === 'string' ? { errorText: message.errorText } : {}),
      });
    }
  }

  /** A frame's document is gone: its tools with it. */
  private dropFrame(frameId: string): void {
    const frame = this.frames.get(frameId);
    if (!frame) return;
    this.frames.delete(frameId);
    const page = this.targets.pageOf(frame.session)?.session;
    if (page && frame.tools.size) this.emit(page, 'WebMCP.toolsRemoved', { tools: [...frame.tools.values()] });
  }
}
