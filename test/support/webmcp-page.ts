/** A page that registers two WebMCP tools through `navigator.modelContext`: `add` and `fail`. */
export const TOOLS_PAGE = `<!doctype html><title>tools</title><p id="out">nothing yet</p>
<script>
navigator.modelContext.registerTool({
  name: 'add',
  description: 'Adds two numbers',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  async execute({ a, b }) {
    document.getElementById('out').textContent = 'added ' + (a + b);
    return { content: [{ type: 'text', text: String(a + b) }] };
  },
});
navigator.modelContext.registerTool({
  name: 'fail',
  description: 'Always fails',
  inputSchema: { type: 'object', properties: {} },
  async execute() { throw new Error('it failed on purpose'); },
});
</script>`;
