/**
 * The MCP server over a connected cloud browser (docs/decisions.md D31), with the official SDK:
 * one `Server` per agent, and a streamable-HTTP endpoint that keeps each agent's MCP session
 * (`Mcp-Session-Id`) until it ends it or the browser goes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from '../cli/version.js';
import { BROWSER_TOOLS } from './catalog.js';
import { argsProblem, type JsonSchema } from './schema.js';
import { type BrowserTools, callTool } from './tools.js';

/** The SDK's server with every tool of the catalogue, acting through `tools`. */
export function createMcpServer(tools: BrowserTools): Server {
  const server = new Server(
    { name: 'cloud-browser', title: 'cloud-browser', version: VERSION },
    {
      capabilities: { tools: {} },
      // The SDK checks an agent's elicitation answers with it (the server asks none): this check
      // rather than the SDK's default, Ajv, which the package then does not carry (tsup.config.ts).
      jsonSchemaValidator: {
        getValidator:
          <T>(schema: unknown) =>
          (input: unknown) => {
            const problem = argsProblem(schema as JsonSchema, input, 'answer');
            return problem
              ? { valid: false as const, data: undefined, errorMessage: problem }
              : { valid: true as const, data: input as T, errorMessage: undefined };
          },
      },
      instructions:
        'A cloud browser session. Take a snapshot (browser_snapshot) to read the page and get element references (target), then act on them.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: BROWSER_TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object' },
      annotations: { title: t.title, readOnlyHint: t.readOnly, destructiveHint: false, openWorldHint: true },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => ({
    ...(await callTool(tools, BROWSER_TOOLS, request.params.name, request.params.arguments)),
  }));
  return server;
}

/** The most an agent's request body may hold. */
const MAX_BODY = 4 * 1024 * 1024;

/** A streamable-HTTP MCP endpoint: each agent's MCP session with its own server and current tab. */
export class McpHttpEndpoint {
  private readonly sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Server }>();
  private closed = false;

  constructor(
    private readonly toolsFor: () => BrowserTools,
    /** `Host` values to accept (DNS rebinding protection); any when left out. */
    private readonly allowedHosts?: string[],
  ) {}

  /** How many agents are connected. */
  get size(): number {
    return this.sessions.size;
  }

  /** Answer one HTTP request of the MCP endpoint (POST, GET for the event stream, DELETE to end). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.closed) return reply(res, 404, 'the session has ended');
    if (this.allowedHosts && !this.allowedHosts.includes(req.headers.host ?? '')) {
      // A page of another site that resolves its name to this machine (DNS rebinding) is not let in.
      return reply(res, 403, `the Host ${JSON.stringify(req.headers.host ?? '')} is not this endpoint's`);
    }
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? this.sessions.get(id) : undefined;
    if (typeof id === 'string' && !known)
      return reply(res, 404, 'no MCP session has this Mcp-Session-Id: initialize again');
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJson(req);
      if ('status' in read) return reply(res, read.status, read.error);
      body = read.value;
    }
    if (known) return known.transport.handleRequest(req, res, body);
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return reply(res, 400, 'start with an initialize request (no Mcp-Session-Id yet)');
    }
    const server = createMcpServer(this.toolsFor());
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sid) => {
        this.sessions.set(sid, { transport, server });
      },
      onsessionclosed: (sid) => {
        this.sessions.delete(sid);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /** End every agent's session; later requests are answered 404. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.server.close().catch(() => {})));
  }
}

/** A JSON-RPC error answer, as the SDK words its own. */
function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function readJson(req: IncomingMessage): Promise<{ value: unknown } | { error: string; status: number }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return { error: `the request body is over ${MAX_BODY / 1024 / 1024} MiB`, status: 413 };
    chunks.push(chunk as Buffer);
  }
  try {
    return { value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { error: 'the request body is not JSON (Parse error)', status: 400 };
  }
}
