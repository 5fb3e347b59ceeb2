/**
 * What the emulator's crawler makes of pages in the shapes real documentation generators emit
 * (fixtures written here after Sphinx, DocBook and a GitHub-style page), and search across
 * crawls whose scores compare.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrawlerClient } from '../../packages/cloud-browser/src/crawler/index.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { all } from '../support/all.js';
import { type Loopback, listenLoopback } from '../support/loopback.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/docs/${name}.html`, import.meta.url), 'utf8');
const PAGES: Record<string, string> = {
  '/py/tutorial/inputoutput.html': fixture('sphinx'),
  '/pg/datatype-numeric.html': fixture('docbook'),
  '/gh/acme/widget/wiki/Streams': fixture('github'),
};
const filler = (n: number) => Array.from({ length: 60 }, (_, i) => `word${(i * 7 + n) % 50}`).join(' ');
// Two small sites for search: one where "kettle" is rare, one where every page speaks of it.
for (let i = 0; i < 10; i++) {
  PAGES[`/a/${i}`] =
    `<title>A ${i}</title><main><h1>A ${i}</h1><p>${filler(i)}${i === 3 ? ' a kettle is mentioned once here.' : ''} ${filler(i + 1)}</p></main>`;
  PAGES[`/b/${i}`] =
    `<title>B ${i}</title><main><h1>B ${i}</h1><p>${i === 5 ? 'The kettle manual. The kettle boils water. Fill the kettle, close the kettle lid, press the kettle switch; the kettle light goes on, the kettle clicks off when the kettle water boils, and you pour from the kettle spout. Descale the kettle monthly.' : `Our kettle shop. ${filler(i)}`} ${filler(i + 2)}</p></main>`;
}

let emulator: Emulator;
let site: Loopback;
let origin: string;
let client: CrawlerClient;

beforeAll(async () => {
  const server = createServer((req, res) => {
    const body = PAGES[new URL(req.url ?? '/', 'http://x').pathname];
    if (body === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  site = await listenLoopback(server);
  origin = `http://127.0.0.1:${site.port}`;
  emulator = await startEmulator();
  client = new CrawlerClient({ key: emulator.apiKey, baseUrl: emulator.apiUrl });
});
afterAll(async () => {
  await emulator.close();
  await site.close();
});

async function crawl(paths: string[]): Promise<string> {
  const { uuid } = await client.start({
    url_list: paths.map((p) => `${origin}${p}`),
    search: true,
    content_formats: ['markdown', 'text', 'clean_html', 'html'],
  });
  await client.wait(uuid, { pollInterval: 50 });
  return uuid;
}

describe('content worth reading', () => {
  let uuid: string;
  const page = async (path: string) => {
    const [p] = await all(
      client.contents(uuid, { url: `${origin}${path}`, formats: ['markdown', 'text', 'clean_html'] }),
    );
    const c = p?.content ?? {};
    return { markdown: c.markdown ?? '', text: c.text ?? '', clean_html: c.clean_html ?? '' };
  };
  beforeAll(async () => {
    uuid = await crawl(Object.keys(PAGES).filter((p) => !/^\/[ab]\//.test(p)));
  });

  it('Sphinx: code in <pre> without <code> fenced and unescaped, no ¶, no navigation before the title, absolute links', async () => {
    const { markdown, text, clean_html } = await page('/py/tutorial/inputoutput.html');
    expect(markdown.startsWith('# 7. Input and Output\n')).toBe(true);
    expect(markdown).toContain(
      "```pycon\n>>> f = open('workfile', 'w', encoding=\"utf-8\")\n>>> f.write('a *b* _c_ [d](e) 2 < 3')\n```",
    );
    expect(markdown).not.toContain('¶');
    expect(markdown).toContain(`[file object](${origin}/py/glossary.html#term-file-object)`);
    for (const chrome of ['Navigation', 'Table of Contents', 'Quick search', 'Show Source', 'Copyright', 'previous'])
      expect(markdown).not.toContain(chrome);
    expect(text.startsWith('7. Input and Output\n')).toBe(true);
    expect(clean_html).not.toMatch(/sphinxsidebar|class="related"|headerlink/);
  });

  it('DocBook: the table a GFM table, programlisting fenced, no navheader or navfooter, cells separated in text', async () => {
    const { markdown, text } = await page('/pg/datatype-numeric.html');
    expect(markdown.startsWith('# 8.1. Numeric Types\n')).toBe(true);
    expect(markdown).toContain(
      [
        '| Name | Storage Size | Description | Range |',
        '| --- | --- | --- | --- |',
        '| `smallint` | 2 bytes | small-range integer | -32768 to +32767 |',
        '| `integer` | 4 bytes | typical choice for integer | -2147483648 to +2147483647 |',
        '| `bigint` | 8 bytes | large-range integer | -9223372036854775808 to +9223372036854775807 |',
        '| `numeric` | variable | user-specified precision, exact \\| inexact | up to 131072 digits before the decimal point |',
      ].join('\n'),
    );
    expect(markdown).toContain(
      '```\nCREATE TABLE products (\n    product_no integer,\n    price numeric CHECK (price > 0) -- a *note* with_underscores\n);\n```',
    );
    expect(markdown).not.toMatch(/Prev|Next|Home|Up\b/);
    expect(markdown).not.toMatch(/\s#\s*$/m);
    expect(markdown).toContain(`(${origin}/pg/sql-syntax-lexical.html#SQL-SYNTAX-CONSTANTS`);
    expect(text).toMatch(
      /bigint\s{2,}8 bytes\s{2,}large-range integer\s{2,}-9223372036854775808 to \+9223372036854775807/,
    );
    expect(text).not.toContain('NameStorage');
  });

  it('GitHub style: <pre><code class="language-js"> fenced as js, header, repository tabs, sidebar and footer gone', async () => {
    const { markdown } = await page('/gh/acme/widget/wiki/Streams');
    expect(markdown.startsWith('# Streams guide\n')).toBe(true);
    const literal = ['`got $', '{chunk}`'].join('');
    expect(markdown).toContain(
      `\`\`\`js\nconst reader = stream.getReader();\nfor await (const chunk of stream) {\n  console.log(chunk.length > 0 && ${literal}); // *not* emphasis\n}\n\`\`\``,
    );
    expect(markdown).toContain(`[readable streams](${origin}/gh/acme/widget/wiki/Readers)`);
    expect(markdown).toContain(`[writers page](${origin}/acme/widget/wiki/Writers)`);
    for (const chrome of ['Pricing', 'Sign in', 'Issues', 'Pages 12', 'Terms', '© 2026'])
      expect(markdown).not.toContain(chrome);
  });

  it('finds the numeric types page when asked for the maximum value of a bigint, and the bigint row by its words', async () => {
    const res = await client.search({ crawls: [uuid], query: 'maximum value of a bigint' });
    expect(res.results[0]?.url).toBe(`${origin}/pg/datatype-numeric.html`);
    expect(res.results[0]?.text).toMatch(/bigint.*values outside of the allowed range/);
    const row = await client.search({ crawls: [uuid], query: 'bigint large-range integer' });
    expect(row.results[0]?.text).toContain(
      'bigint 8 bytes large-range integer -9223372036854775808 to +9223372036854775807',
    );
  });
});

describe('search across crawls', () => {
  it('scores pages of several crawls as one index would, and gives the best passage', async () => {
    const a = await crawl(Object.keys(PAGES).filter((p) => p.startsWith('/a/')));
    const b = await crawl(Object.keys(PAGES).filter((p) => p.startsWith('/b/')));
    // Alone, the page that mentions a kettle once is the best of its crawl ...
    const alone = await client.search({ crawls: [a], query: 'kettle' });
    expect(alone.results.map((r) => r.url)).toEqual([`${origin}/a/3`]);
    // ... but not of both: the kettle manual is, though "kettle" is common in its own crawl.
    const both = await client.search({ crawls: [a, b], query: 'kettle' });
    expect(both.results[0]).toMatchObject({ url: `${origin}/b/5`, crawler_uuid: b });
    expect(both.results[0]?.text).toMatch(/^The kettle manual\. The kettle boils water\./);
    const scores = both.results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((x, y) => y - x));
  });
});
