/**
 * `cloud-browser/mcp`: an MCP server over a connected cloud browser, for AI agents
 * (docs/decisions.md D31). `cloud-browser mcp` serves it on standard input and output or on
 * loopback HTTP; the emulator serves it as each `enable_mcp` session's endpoint.
 *
 * @example
 * const session = await connectPlaywright(chromium, { api_key, enable_mcp: true });
 * const server = createMcpServer(new BrowserTools(session.browser, [api_key]));
 * await server.connect(new StdioServerTransport());
 */
export { BROWSER_TOOLS } from './catalog.js';
export type { JsonSchema } from './schema.js';
export { createMcpServer, McpHttpEndpoint } from './server.js';
export { type BrowserTool, BrowserTools, type ToolResult } from './tools.js';
