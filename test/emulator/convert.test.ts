/**
 * The crawler's conversion of documentation pages: quality points measured one by one, and
 * search that finds the page a query names on a small manual (a relevance set).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Element } from 'domhandler';
import { DomUtils, parseDocument } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { innerHtml } from '../../packages/emulator/src/crawler/clean-html.js';
import { convertPage, readHtml } from '../../packages/emulator/src/crawler/convert.js';
import { Converter, formatOf } from '../../packages/emulator/src/crawler/converter.js';
import { SearchIndex, tokens } from '../../packages/emulator/src/crawler/search.js';
import { MANUAL, manualHtml, NAMED_BY_TITLE, RELEVANCE } from '../fixtures/docs/manual.js';

const URL_ = 'http://127.0.0.1:8000/docs/guide/page.html';
const PAGE = `<!doctype html><html><head><title>Guide</title><base href="/docs/guide/"></head><body>
<header class="site-header"><a href="/">Home</a> <a href="/pricing">Pricing</a></header>
<nav aria-label="breadcrumbs"><a href="/docs/">Docs</a> › Guide</nav>
<div class="wrapper"><aside class="sidebar"><ul><li><a href="a.html">Sidebar entry one</a></li><li><a href="b.html">Sidebar entry two</a></li></ul></aside>
<main><h1>Stream guide<a class="headerlink" href="#stream-guide" title="Permalink">¶</a></h1>
<p>Call <code>f(<code>T</code> *<em>x</em>)</code> with a <a href="readers.html">reader</a> and see <a href="#limits">the limits</a>.</p>
<h2 id="limits">Limits <a class="anchor" href="#limits">#</a></h2>
<table><thead><tr><th>Name</th><th>Max</th></tr></thead><tbody><tr><td><code>chunk</code></td><td>64 KiB | more</td></tr><tr><td>queue</td><td>16</td></tr></tbody></table>
<div class="highlight-python"><pre><span class="k">def</span> read(<span>x</span>):
    return x * 2</pre></div>
<pre><code class="language-ts">const a = \`x\`;</code></pre>
<p><img src="img/flow.png" alt="flow"> Backticks: <code>a\`b</code>.</p></main></div>
<footer class="footer">© 2026 Example · <a href="/terms">Terms</a></footer></body></html>`;

describe('conversion of a documentation page', () => {
  const out = convertPage(PAGE, URL_);
  const md = out.markdown ?? '';

  it('leads with the title as an h1 and drops permalink marks', () => {
    expect(md.startsWith('# Stream guide\n\n')).toBe(true);
    expect(md).not.toMatch(/¶|\[#\]|\s#\s*$/m);
    expect(md).toContain('\n## Limits\n');
  });

  it('keeps no navigation, sidebar, header or footer', () => {
    for (const chrome of ['Pricing', 'Sidebar entry', 'Docs', 'Terms', '© 2026']) expect(md).not.toContain(chrome);
    expect(out.clean_html).not.toMatch(/sidebar|footer|Pricing/);
  });

  it('makes links and images absolute against <base href>, keeping in-page links', () => {
    expect(md).toContain('[reader](http://127.0.0.1:8000/docs/guide/readers.html)');
    // A fragment resolves against the base too, as a browser resolves it.
    expect(md).toContain('[the limits](http://127.0.0.1:8000/docs/guide/#limits)');
    expect(md).toContain('![flow](http://127.0.0.1:8000/docs/guide/img/flow.png)');
  });

  it('writes nested inline code as one clean code span, and a backtick inside with a longer fence', () => {
    expect(md).toContain('Call `f(T *x)` with');
    expect(md).toContain('Backticks: ``a`b``.');
  });

  it('writes a GFM table, pipes escaped, and fences code with its language', () => {
    expect(md).toContain('| Name | Max |\n| --- | --- |\n| `chunk` | 64 KiB \\| more |\n| queue | 16 |');
    expect(md).toContain('```python\ndef read(x):\n    return x * 2\n```');
    expect(md).toContain('```ts\nconst a = `x`;\n```');
  });

  it('writes text with the table in columns and headings as written', () => {
    expect(out.text?.startsWith('Stream guide\n\n')).toBe(true);
    expect(out.text).toMatch(/chunk {3,}64 KiB \| more/);
    expect(out.text).toContain('\nLimits\n');
  });

  it('converts only the formats asked for, and finds the headings', () => {
    const some = convertPage(PAGE, URL_, ['text']);
    expect(some.markdown).toBeUndefined();
    expect(some.clean_html).toBeUndefined();
    expect(some.headings).toEqual(['Limits']);
  });

  it('writes a page whose content is its heading alone (a chapter and its table of contents) as that heading, once', () => {
    const chapter = `<html><head><title>B-Tree Indexes</title></head><body><div class="navheader"><a href="a.html">Prev</a></div>
<div class="chapter"><div class="titlepage"><div><div><h2 class="title">Chapter 67. B-Tree Indexes</h2></div></div></div>
<div class="toc"><dl><dt><a href="btree-intro.html">67.1. Introduction</a></dt><dt><a href="btree-behavior.html">67.2. Behavior</a></dt></dl></div></div></body></html>`;
    const out = convertPage(chapter, URL_);
    expect(out.markdown).toBe('# Chapter 67. B-Tree Indexes');
    expect(out.text).toBe('Chapter 67. B-Tree Indexes');
    expect(out.clean_html).toBe('<h1>Chapter 67. B-Tree Indexes</h1>');
    expect(out.headings).toEqual([]);
  });

  it('keeps a reference page whole: its name, synopsis and description beside the long section of its options', () => {
    const options = Array.from(
      { length: 6 },
      (_, i) =>
        `<dt><code>--option-${i}</code></dt><dd><p>What option ${i} does, at some length, so that the options hold most of the page's text.</p></dd>`,
    ).join('');
    const page = `<html><head><title>pg_tool</title></head><body><div class="navheader"><a href="a.html">Prev</a></div>
<div class="refentry"><div class="refnamediv"><h2>pg_tool</h2><p>pg_tool — copy a database into a file</p></div>
<div class="refsynopsisdiv"><h2>Synopsis</h2><p><code>pg_tool [option...] [dbname]</code></p></div>
<div class="refsect1"><h2>Description</h2><p>pg_tool copies a database.</p></div>
<div class="refsect1"><h2>Options</h2><div class="note"><h3>Note</h3><p>Read this first.</p></div><dl>${options}</dl></div></div></body></html>`;
    const out = convertPage(page, URL_);
    expect(out.title).toBe('pg_tool');
    expect(out.markdown).toMatch(/^# pg_tool\n\npg\\_tool — copy a database into a file\n\n## Synopsis\n/);
    expect(out.markdown).toContain('## Description\n\npg\\_tool copies a database.');
    expect(out.markdown).toContain('`--option-5`');
    expect(out.headings).toEqual(['Synopsis', 'Description', 'Options', 'Note']);
  });

  it('writes clean HTML as dom-serializer would: bare empty attributes, void elements, no-break spaces, SVG in its case', () => {
    const body =
      '<p class="a&quot;b" data-x="" title="1&nbsp;&amp;2">x&nbsp;&lt;y&gt; &amp; z<br><img src="/i.png" alt=""><input disabled></p>' +
      '<svg viewBox="0 0 2 2"><path d="M0 0"/><foreignObject><p>in</p></foreignObject></svg><math><mi>x</mi></math>' +
      '<pre>a &lt; b</pre><textarea>t &amp; u</textarea><table><tr><td colspan="2">c</td></tr></table>';
    const dom = parseDocument(`<main>${body}</main>`, {
      decodeEntities: true,
      lowerCaseTags: true,
      lowerCaseAttributeNames: true,
    });
    const main = DomUtils.findOne((e) => e.name === 'main', dom.children) as Element;
    expect(innerHtml(main)).toBe(DomUtils.getInnerHTML(main, { encodeEntities: 'utf8' }));
    expect(innerHtml(main)).toContain(
      '<p class="a&quot;b" data-x title="1&nbsp;&amp;2">x&nbsp;&lt;y&gt; &amp; z<br><img src="/i.png" alt><input disabled></p>',
    );
    expect(innerHtml(main)).toContain('<svg viewBox="0 0 2 2">');
  });

  it('writes each run of white space, of any kind, as one space, and code spans and fences past their backticks', () => {
    const page = '<main><p>a \u00a0 b\n\tc  d e\u00a0f <code>x  ``y``\n z</code></p><pre>p `q` ```r```</pre></main>';
    const { markdown, text } = convertPage(page, URL_, ['markdown', 'text']);
    expect(markdown).toBe('a b c d e f ```x ``y`` z```\n\n````\np `q` ```r```\n````');
    expect(text).toBe('a b c d e f x ``y`` z\n\np `q` ```r```');
  });

  it('keeps a section whose heading is wrapped in a block of its own (DocBook), its introduction and its title', () => {
    const long = (w: string) => `<p>${`${w} `.repeat(400)}</p>`;
    const page = `<body><div class="sect1"><div class="titlepage"><div><h2 class="title">B.1. Date/Time Input</h2></div></div>
<p>Date/time input strings are decoded using the following procedure.</p>
<div class="procedure"><div class="tip"><h3 class="title">Tip</h3><p>A tip.</p></div>${long('step')}${long('more')}</div></div></body>`;
    const { markdown, title } = convertPage(page, URL_, ['markdown']);
    expect(title).toBe('B.1. Date/Time Input');
    expect(markdown).toMatch(/^# B\.1\. Date\/Time Input\n\nDate\/time input strings are decoded/);
    expect(markdown).toContain('### Tip');
    // A site's name in a block before the content, as high as the content's own title, stays out.
    const site = `<body><div class="top"><h1>Acme Docs</h1></div><div class="content"><h1>Install</h1>${long('setup')}</div></body>`;
    const installed = convertPage(site, URL_, ['markdown']);
    expect(installed.title).toBe('Install');
    expect(installed.markdown).not.toContain('Acme Docs');
  });

  it('writes clean HTML that is HTML: text and attributes escaped again after the parse decoded them', () => {
    const html = convertPage(
      '<main><h1>T</h1><p>Use &lt;div&gt; &amp; <a href="/x?a=1&amp;b=2" title="&quot;q&quot;">x</a></p><pre>if a &lt; b</pre></main>',
      URL_,
      ['clean_html'],
    ).clean_html;
    expect(html).toBe(
      '<h1>T</h1>\n<p>Use &lt;div&gt; &amp; <a href="http://127.0.0.1:8000/x?a=1&amp;b=2" title="&quot;q&quot;">x</a></p><pre>if a &lt; b</pre>',
    );
  });

  it('reads a page on a worker thread, from its UTF-8 bytes, as it reads it here', async () => {
    const converter = new Converter();
    const bytes = new TextEncoder().encode(PAGE);
    const read = await converter.read(bytes, URL_, ['markdown', 'text']);
    expect(converter.threads).toBeGreaterThan(0);
    const here = readHtml(PAGE, URL_, ['markdown', 'text']);
    expect(read.parsed).toEqual(here.parsed);
    expect(read.formats?.headings).toEqual(here.converted?.headings);
    expect(read.formats?.lengths.map(([f]) => f)).toEqual(['markdown', 'text']);
    expect(formatOf(read, 'markdown')).toBe(here.converted?.markdown);
    expect(formatOf(read, 'text')).toBe(here.converted?.text);
    expect(formatOf(read, 'clean_html')).toBeUndefined();
    // The bytes handed over were a copy: the caller's are whole.
    expect(new TextDecoder().decode(bytes)).toBe(PAGE);
  });

  it('lets the process exit by itself once its pages are read, idle workers included', async () => {
    // One page: one worker reads it, the others never get one (an idle worker once kept the
    // process alive; the child would be killed at the timeout here, and fail).
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'test/fixtures/convert-and-exit.ts'],
      { cwd: fileURLToPath(new URL('../..', import.meta.url)), timeout: 30_000 },
    );
    const out = JSON.parse(stdout) as { text: string; threads: number };
    expect(out.text).toContain('One page.');
    expect(out.threads).toBeGreaterThan(0);
  }, 60_000);

  it('reads the links of the whole page, chrome included, while its formats leave the chrome out', () => {
    const read = readHtml(PAGE, URL_, ['markdown']);
    const links = read.parsed.links.map((l) => l.href);
    expect(links).toContain('http://127.0.0.1:8000/pricing');
    expect(links).toContain('http://127.0.0.1:8000/docs/guide/a.html');
    expect(links).toContain('http://127.0.0.1:8000/terms');
    expect(read.parsed.title).toBe('Guide');
    expect(read.converted?.markdown).not.toContain('Pricing');
    expect(readHtml(PAGE, URL_, []).parsed).toEqual(read.parsed);
  });
});

describe('search on a manual', () => {
  const index = new SearchIndex();
  for (const page of MANUAL) {
    const url = `http://127.0.0.1:8000/docs/${page.slug}.html`;
    const converted = convertPage(manualHtml(page), url, ['text']);
    index.put(url, page.title, converted.text ?? '', converted.headings);
  }
  const ranks = RELEVANCE.map(([query, slug]) => {
    const hits = index.search(query, 10).map((h) => h.url.replace(/^.*\/docs\/|\.html$/g, ''));
    return { query, slug, rank: hits.indexOf(slug) + 1, hits: hits.slice(0, 3) };
  });

  it('reads words as a query would: plurals stemmed, joined words as their parts and as one', () => {
    expect(tokens('Databases, cases, indexes and classes in pg_dump and B-Tree')).toEqual([
      'database',
      'case',
      'index',
      'and',
      'class',
      'in',
      'pg',
      'dump',
      'pgdump',
      'and',
      'tree',
      'btree',
    ]);
  });

  it('has a relevance set of at least 20 queries', () => {
    expect(RELEVANCE.length).toBeGreaterThanOrEqual(20);
  });

  it('puts the expected page first for at least 80 % of the queries, and in the first three for all', () => {
    const first = ranks.filter((r) => r.rank === 1).length / ranks.length;
    expect(ranks.filter((r) => r.rank === 0 || r.rank > 3)).toEqual([]);
    expect(first).toBeGreaterThanOrEqual(0.8);
  });

  it('ranks first the page a query names by its title, whatever the length of the pages that repeat its words', () => {
    const named = ranks.filter((r) => NAMED_BY_TITLE.some(([query]) => query === r.query));
    expect(named).toHaveLength(NAMED_BY_TITLE.length);
    expect(named.filter((r) => r.rank !== 1)).toEqual([]);
  });

  it('ranks the numeric types page first for the maximum value of a bigint, above the extension that repeats the words', () => {
    expect(ranks[0]).toMatchObject({ query: 'maximum value of a bigint', rank: 1 });
  });
});
