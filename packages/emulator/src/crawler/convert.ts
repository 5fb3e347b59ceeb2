/**
 * A crawled page's main content in every derived format, in one parse (docs/decisions.md D30):
 * htmlparser2 builds a light tree (no browser DOM), the page's chrome is dropped (navigation,
 * headers, footers, sidebars, forms, scripts, and containers named so by their class or id),
 * the main content is the element that holds most of what remains to read, permalink marks go
 * and links become absolute; then one walk each writes GitHub-flavoured Markdown (tables, fenced
 * code with its language, nested inline code as one span), plain text (tables in columns,
 * headings as written) and the content's HTML.
 */
import { type ChildNode, type Document, DomHandler, type Element, isTag, isText } from 'domhandler';
import { DomUtils, Parser } from 'htmlparser2';
import { innerHtml } from './clean-html.js';
import { PageReader, type ParsedPage, parsePage } from './page-reader.js';

/** The derived formats of a page. */
export type DerivedFormat = 'clean_html' | 'markdown' | 'text';
export const DERIVED_FORMATS: readonly DerivedFormat[] = ['clean_html', 'markdown', 'text'];

/** A page's title, its headings and the formats asked for. */
export type Converted = { title: string; headings: string[] } & Partial<Record<DerivedFormat, string>>;

/** Elements that are never content. */
const DROPPED = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'canvas',
  'svg',
  'head',
  'title',
  'meta',
  'link',
  'base',
  'button',
  'select',
  'input',
  'textarea',
  'form',
  'nav',
  'aside',
  'footer',
  'header',
  'dialog',
]);
const CHROME_ROLES = new Set([
  'navigation',
  'banner',
  'contentinfo',
  'complementary',
  'search',
  'menu',
  'menubar',
  'toolbar',
  'tablist',
]);
/** Class or id words of the chrome documentation generators and sites put around the content. */
const CHROME_NAMES =
  /(^|[\s_-])(sidebar|sphinxsidebar(wrapper)?|related|navheader|navfooter|navbar|navigation|breadcrumbs?|menu|footer|header|site-header|masthead|toc|toctree-wrapper|skip-link|cookie|banner|pagination|prev-next|edit-link|reponav|subnav)($|[\s_-])/i;
/** Permalink marks beside headings. */
const PERMALINK_CLASS = /(^|\s)(headerlink|id_link|anchor|anchorjs-link|heading-anchor|hash-link|permalink)(\s|$)/;
const PERMALINK_TEXT = /^[\s¶§#🔗]*$/u;
/** Whether an element is a heading, `h1` to `h6` (called for every element: no pattern). */
const isHeading = (name: string) =>
  name.length === 2 && name.charCodeAt(0) === 104 && name.charCodeAt(1) >= 49 && name.charCodeAt(1) <= 54;
/** Blocks the main content is never narrowed to: it holds them (a page of a heading alone is the heading's parent). */
const LEAVES = new Set(['p', 'pre', 'table']);

const BLOCK = new Set([
  'address',
  'article',
  'blockquote',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'li',
  'main',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'ul',
  'body',
  'html',
  'caption',
  'center',
]);

/**
 * Runs of white space as one space. Only the runs that are not one space already are matched
 * (a run that begins with other white space, or a space and more): fewer pieces than `\s+`.
 */
const UNEVEN_SPACE = /[^\S ]\s*| \s+/g;
const collapse = (text: string) => text.replace(UNEVEN_SPACE, ' ');
const squash = (text: string) => collapse(text).trim();
const textOf = (node: ChildNode | Element): string => DomUtils.textContent(node);

function isChrome(name: string, attribs: Record<string, string>): boolean {
  if (DROPPED.has(name)) return true;
  const role = attribs.role;
  if (role && CHROME_ROLES.has(role)) return true;
  if (attribs['aria-hidden'] === 'true' || attribs.hidden !== undefined) return true;
  const { class: names, id } = attribs;
  if ((names === undefined && id === undefined) || name === 'main' || name === 'article') return false;
  return (names !== undefined && CHROME_NAMES.test(names)) || (id !== undefined && CHROME_NAMES.test(id));
}

/** A permalink mark beside a heading: an in-page link marked so by its class or its text alone. */
function isPermalink(a: Element): boolean {
  if (!(a.attribs.href ?? '').startsWith('#')) return false;
  const mark = PERMALINK_CLASS.test(a.attribs.class ?? '') || PERMALINK_TEXT.test(textOf(a));
  return mark && !DomUtils.findOne((e) => e.name === 'img', a.children);
}

/** Characters of `text` that are not white space (what `\s` matches). */
function visibleLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 32 && c < 160) n++;
    else if (!isSpace(c)) n++;
  }
  return n;
}

const isSpace = (c: number) =>
  c === 32 ||
  (c >= 9 && c <= 13) ||
  c === 160 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000 ||
  c === 0xfeff;

/**
 * The page's tree as htmlparser2 builds it, less what is never content (docs/decisions.md D30):
 * the chrome (navigation, headers, footers, sidebars, forms, scripts, and containers named so by
 * their class or id) and comments are never built, permalink marks go as they close, and each
 * element is weighed as it closes (characters of text that is not link text). The same parse
 * feeds the page's reader: its links, title and robots directives.
 */
class ContentTree extends DomHandler {
  readonly reader: PageReader;
  /** Characters of readable text under each element that are not link text (links weigh nothing). */
  readonly weights = new Map<Element | Document, number>();
  /** `<main>`, `role="main"` and `<article>` elements, in document order. */
  readonly hints: Element[] = [];
  /** Headings (`<h1>` to `<h6>`), in document order. */
  readonly headings: Element[] = [];
  /** The first `<body>`. */
  body: Element | undefined;
  /** Links and images, made absolute once the page's base is known. */
  private readonly linked: Element[] = [];
  /** How deep the parse is inside an element that is not built. */
  private skipped = 0;
  /** How deep the parse is inside links (their text weighs nothing). */
  private inLinks = 0;
  /** Characters of readable text so far, and where each open element began. */
  private counted = 0;
  private readonly starts: number[] = [];

  constructor(url: string) {
    super();
    this.reader = new PageReader(url);
  }

  override onopentag(name: string, attribs: Record<string, string>): void {
    this.reader.open(name, attribs);
    if (this.skipped > 0 || (name !== 'html' && name !== 'body' && isChrome(name, attribs))) {
      this.skipped++;
      return;
    }
    super.onopentag(name, attribs);
    const el = this.tagStack[this.tagStack.length - 1] as Element;
    this.starts.push(this.counted);
    if (name === 'a') this.inLinks++;
    if (name === 'body') this.body ??= el;
    else if (name === 'main' || name === 'article' || attribs.role === 'main') this.hints.push(el);
    if ((name === 'a' && attribs.href) || (name === 'img' && attribs.src)) this.linked.push(el);
    else if (isHeading(name)) this.headings.push(el);
  }

  override ontext(data: string): void {
    this.reader.text(data);
    if (this.skipped > 0) return;
    super.ontext(data);
    if (this.inLinks === 0) this.counted += visibleLength(data);
  }

  override onclosetag(name = ''): void {
    this.reader.close(name);
    if (this.skipped > 0) {
      this.skipped--;
      return;
    }
    const el = this.tagStack[this.tagStack.length - 1] as Element;
    super.onclosetag();
    const start = this.starts.pop() ?? 0;
    if (el.name === 'a') {
      this.inLinks--;
      if (isPermalink(el)) DomUtils.removeElement(el);
      return;
    }
    // Only blocks (and a main by its role) can be the main content: only they are weighed.
    if (BLOCK.has(el.name) || el.attribs.role === 'main') this.weights.set(el, this.counted - start);
  }

  override oncomment(): void {}
  override oncommentend(): void {}
  override onprocessinginstruction(): void {}

  /** The weight of what was read in all (the root's, when the page has no body). */
  get total(): number {
    return this.counted;
  }

  /** Links and images made absolute by the page's resolver. */
  absolutize(resolveHere: (href: string) => string | undefined): void {
    for (const el of this.linked) {
      const key = el.name === 'a' ? 'href' : 'src';
      const absolute = resolveHere(el.attribs[key] ?? '');
      if (absolute) el.attribs[key] = absolute;
    }
  }
}

/** Whether `el` is `root` or under it. */
function within(el: Element, root: Element | Document): boolean {
  for (let at: Element | Document | null = el; at; at = at.parent as Element | Document | null)
    if (at === root) return true;
  return false;
}

/**
 * The element of the main content: a `<main>`, `role="main"` or a single `<article>` that holds
 * most of the text, else, from the body down, the child that holds nine tenths of its parent's
 * text while one does (the chrome is gone already: what is left beside the content is little,
 * while a reference page's synopsis and description beside its long options are a fifth): a
 * block that holds more blocks (not a paragraph, code, a table or a heading), with no heading
 * before it that names it (the heading of a section goes with its section).
 */
function mainOf(tree: ContentTree, root: Element): Element {
  const weight = (el: Element) => tree.weights.get(el) ?? 0;
  const total = weight(root) || 1;
  const isMain = (e: Element) => e.name === 'main' || e.attribs.role === 'main';
  for (const test of [isMain, (e: Element) => e.name === 'article']) {
    const found = tree.hints.filter((e) => test(e) && within(e, root));
    if (found.length === 1 && found[0] && weight(found[0]) >= total * 0.5) return found[0];
  }
  let at = root;
  for (;;) {
    const own = weight(at);
    // (An element that is not a block weighs 0 here: had it held nine tenths, no other child
    // could, and the descent would end at `at` all the same.)
    const children = at.children.filter(isTag);
    const i = children.findIndex((c) => weight(c) >= own * 0.9);
    const next = children[i];
    if (!next || !BLOCK.has(next.name) || LEAVES.has(next.name) || isHeading(next.name)) return at;
    // A heading before it names it: the content is the heading's section, not the part after it.
    // So does one wrapped in a block of its own (DocBook's title page) that outranks the child's.
    const ranks = headingRanks(tree, at);
    const named = ranks.get(next) ?? NO_HEADING;
    if (children.slice(0, i).some((c) => isHeading(c.name) || (ranks.get(c) ?? NO_HEADING) < named)) return at;
    at = next;
  }
}

const NO_HEADING = 7;

/** For each child of `parent` that holds headings, the rank of its highest (1 for `h1`). */
function headingRanks(tree: ContentTree, parent: Element): Map<Element, number> {
  const ranks = new Map<Element, number>();
  for (const h of tree.headings) {
    let child: Element = h;
    while (child.parent && child.parent !== parent) child = child.parent as Element;
    if (child.parent !== parent) continue;
    const rank = Number(h.name[1]);
    if (rank < (ranks.get(child) ?? NO_HEADING)) ranks.set(child, rank);
  }
  return ranks;
}

const UTF8 = new TextDecoder();

/** A page's HTML as text: UTF-8 bytes decoded. */
export const htmlText = (page: string | Uint8Array): string => (typeof page === 'string' ? page : UTF8.decode(page));

const PARSE_OPTIONS = { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true };

/** What reading a page gives: what the crawl goes on with, and the formats asked for. */
export interface ReadPage {
  parsed: ParsedPage;
  converted?: Converted | undefined;
}

/**
 * Read a page fetched from `url` (its final URL) in one parse: its links, title and robots
 * directives, and the `formats` asked for (none: htmlparser2's tokenizer alone, no tree). The
 * page as text, or as UTF-8 bytes.
 */
export function readHtml(page: string | Uint8Array, url: string, formats: readonly DerivedFormat[]): ReadPage {
  const html = htmlText(page);
  if (formats.length === 0) return { parsed: parsePage(html, url) };
  const { tree, resolveHere } = treeOf(html, url);
  return { parsed: tree.reader.result(resolveHere), converted: convertTree(tree, formats) };
}

/** The page's content tree, its links and images made absolute, and how its links resolve. */
function treeOf(html: string, url: string): { tree: ContentTree; resolveHere: (href: string) => string | undefined } {
  const tree = new ContentTree(url);
  new Parser(tree, PARSE_OPTIONS).end(html);
  const resolveHere = tree.reader.resolver();
  tree.absolutize(resolveHere);
  return { tree, resolveHere };
}

/**
 * Convert a page fetched from `url` (its final URL).
 *
 * @example
 * convertPage('<nav>Home</nav><main><h1>Intro</h1><p>See <a href="/a">a</a>.</p></main>', 'http://x/').markdown
 * // '# Intro\n\nSee [a](http://x/a).'
 */
export function convertPage(html: string, url: string, formats: readonly DerivedFormat[] = DERIVED_FORMATS): Converted {
  return convertTree(treeOf(html, url).tree, formats);
}

/** The page's formats from its tree. */
function convertTree(tree: ContentTree, formats: readonly DerivedFormat[]): Converted {
  const root = tree.body ?? (tree.root as unknown as Element);
  if (!tree.weights.has(root)) tree.weights.set(root, tree.total);
  const main = mainOf(tree, root);
  const inMain = tree.headings.filter((h) => within(h, main));
  const heading = inMain.find((h) => h.name === 'h1') ?? inMain.find((h) => h.name <= 'h3');
  const named = heading ? squash(textOf(heading)) : '';
  const title = named || tree.reader.title;
  // Led by its title as an h1: the heading that says it goes.
  const lead = named ? heading : undefined;
  if (lead) DomUtils.removeElement(lead);
  // (Within still: a heading inside the one that went went with it.)
  const headings = inMain.filter((h) => h !== lead && within(h, main)).map((h) => squash(textOf(h)));
  const out: Converted = { title, headings };
  if (formats.includes('clean_html')) {
    const h1 = title ? `<h1>${escapeHtml(title)}</h1>\n` : '';
    out.clean_html = `${h1}${innerHtml(main)}`.trim();
  }
  if (formats.includes('markdown')) {
    const body = new MarkdownWriter().write(main);
    out.markdown = [title ? `# ${title}` : '', body].filter(Boolean).join('\n\n').trim();
  }
  if (formats.includes('text')) {
    out.text = [title, new TextWriter().write(main)].filter(Boolean).join('\n\n').trim();
  }
  return out;
}

export const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Whether a text may hold something Markdown would read as syntax (a superset: checked, then
 * escaped): a special character anywhere, or a line's marker at its start. Two expressions, not
 * one alternation, which V8 would try at every position.
 */
const SPECIAL = /[\\*_`[\]<>]/;
const LEADING_MARKER = /^\s*(?:[-+>#]|\d+\.)/;

/** Markdown's special characters in running text, escaped where they would mean something. */
function escapeMarkdown(text: string): string {
  if (!SPECIAL.test(text) && !LEADING_MARKER.test(text)) return text;
  return text
    .replace(/\\/g, '\\\\')
    .replace(/([*_`[\]<>])/g, '\\$1')
    .replace(/^(\s*)([-+]|#{1,6}|>)(\s)/, '$1\\$2$3')
    .replace(/^(\s*\d+)\.(\s)/, '$1\\.$2');
}

/** `language-js`, `lang-js`, `highlight-python3`, `highlight-source-js` on the block or its wrappers. */
function languageOf(pre: Element): string {
  const code = DomUtils.findOne((e) => e.name === 'code', pre.children);
  for (let el: Element | null = code ?? pre, hops = 0; el && hops < 4; el = el.parent as Element | null, hops++) {
    const match = /(?:^|\s)(?:language|lang|highlight-source|highlight)-([\w+#.-]+)/.exec(el.attribs?.class ?? '');
    if (match?.[1] && match[1] !== 'default') return match[1];
  }
  return '';
}

/** A fence longer than any run of backticks in `code`. */
const fenceFor = (code: string) => '`'.repeat(Math.max(3, longestTicks(code) + 1));

/** The longest run of backticks in `text` (0 for none, the usual case, found without a match). */
function longestTicks(text: string): number {
  if (!text.includes('`')) return 0;
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return longest;
}

/** Inline code as one span, whatever is nested in it; backticks inside get a longer fence. */
function codeSpan(text: string): string {
  const flat = collapse(text);
  if (!flat.trim()) return '';
  const ticks = '`'.repeat(longestTicks(flat) + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${flat}${pad}${ticks}`;
}

/**
 * Block content: each block element written by `block`, the runs of inline content between them
 * by `inline` and set apart as paragraphs.
 */
function blocksOf(nodes: ChildNode[], block: (el: Element) => string, inline: (node: ChildNode) => string): string {
  let out = '';
  let run = '';
  const flush = () => {
    if (run === '') return;
    // Spaces squeezed and lines trimmed where there are any: a plain search finds none in most runs.
    let text = run;
    if (text.includes('  ') || text.includes('\t')) text = text.replace(/[ \t]+/g, ' ');
    if (text.includes('\n')) text = text.replace(/ *\n */g, '\n');
    text = text.trim();
    if (text) out += `\n\n${text}\n\n`;
    run = '';
  };
  for (const node of nodes) {
    if (isTag(node) && BLOCK.has(node.name)) {
      flush();
      out += block(node);
    } else run += inline(node);
  }
  flush();
  return out;
}

/** Writes Markdown for a subtree, block by block. */
class MarkdownWriter {
  write(root: Element): string {
    return this.blocks(root.children, 0)
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  }

  private blocks(nodes: ChildNode[], depth: number): string {
    return blocksOf(
      nodes,
      (el) => this.block(el, depth),
      (node) => this.inline(node),
    );
  }

  private block(el: Element, depth: number): string {
    const name = el.name;
    if (/^h[1-6]$/.test(name)) {
      const text = squash(this.inlines(el.children)).replace(/^([\d.]*\d)\\\./, '$1.');
      return text ? `\n\n${'#'.repeat(Number(name[1]))} ${text}\n\n` : '';
    }
    switch (name) {
      case 'pre': {
        const code = textOf(el).replace(/\n$/, '');
        const fence = fenceFor(code);
        return `\n\n${fence}${languageOf(el)}\n${code}\n${fence}\n\n`;
      }
      case 'ul':
      case 'ol':
        return `\n\n${this.list(el, depth)}\n\n`;
      case 'table':
        return this.table(el);
      case 'blockquote':
        return `\n\n${this.blocks(el.children, depth).trim().replace(/^/gm, '> ')}\n\n`;
      case 'hr':
        return '\n\n---\n\n';
      case 'dt':
        return `\n\n**${squash(this.inlines(el.children))}**\n\n`;
      default:
        return this.blocks(el.children, depth);
    }
  }

  private list(el: Element, depth: number): string {
    const ordered = el.name === 'ol';
    let n = Number(el.attribs.start ?? 1) || 1;
    const lines: string[] = [];
    for (const li of el.children.filter(isTag)) {
      if (li.name !== 'li') continue;
      const marker = ordered ? `${n++}.` : '-';
      const body = this.blocks(li.children, depth + 1)
        .trim()
        .replace(/\n{2,}/g, '\n');
      const indent = ' '.repeat(marker.length + 1);
      lines.push(`${marker} ${body.replace(/\n/g, `\n${indent}`)}`);
    }
    return lines.join('\n');
  }

  /** A table as a GFM table: its first row the header, pipes escaped, each cell on one line. */
  private table(el: Element): string {
    const rows = DomUtils.findAll((e) => e.name === 'tr', el.children)
      .filter((tr) => DomUtils.findOne((e) => e.name === 'table', tr.children) === null)
      .map((tr) =>
        tr.children
          .filter((c): c is Element => isTag(c) && (c.name === 'td' || c.name === 'th'))
          .map((cell) => squash(this.inlines(cell.children)).replace(/\|/g, '\\|')),
      );
    const width = Math.max(0, ...rows.map((r) => r.length));
    if (width === 0) return '';
    const line = (cells: string[]) => `| ${Array.from({ length: width }, (_, i) => cells[i] ?? '').join(' | ')} |`;
    const [head = [], ...rest] = rows;
    return `\n\n${[line(head), line(Array(width).fill('---')), ...rest.map(line)].join('\n')}\n\n`;
  }

  private inlines(nodes: ChildNode[]): string {
    let out = '';
    for (const node of nodes) out += this.inline(node);
    return out;
  }

  private inline(node: ChildNode): string {
    if (isText(node)) return escapeMarkdown(collapse(node.data));
    if (!isTag(node)) return '';
    const inner = () => this.inlines(node.children);
    switch (node.name) {
      case 'code':
      case 'kbd':
      case 'samp':
      case 'tt':
        return codeSpan(textOf(node));
      case 'strong':
      case 'b': {
        const t = inner().trim();
        return t ? `**${t}**` : '';
      }
      case 'em':
      case 'i': {
        const t = inner().trim();
        return t ? `_${t}_` : '';
      }
      case 'a': {
        const t = inner().trim();
        const href = node.attribs.href;
        return href && t && !href.startsWith('javascript:') ? `[${t}](${href.replace(/\)/g, '%29')})` : t;
      }
      case 'img': {
        const src = node.attribs.src;
        return src ? `![${escapeMarkdown(node.attribs.alt ?? '')}](${src})` : '';
      }
      case 'br':
        return '  \n';
      default:
        return BLOCK.has(node.name) ? ` ${this.blocks(node.children, 0).trim()} ` : inner();
    }
  }
}

/** Writes plain text: headings as written, paragraphs apart, tables in columns three spaces apart. */
class TextWriter {
  write(root: Element): string {
    return this.blocks(root.children)
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  }

  private blocks(nodes: ChildNode[]): string {
    return blocksOf(
      nodes,
      (el) => this.block(el),
      (node) => this.inline(node),
    );
  }

  private block(el: Element): string {
    if (el.name === 'pre') return `\n\n${textOf(el).replace(/\n$/, '')}\n\n`;
    if (el.name === 'table') return this.table(el);
    if (el.name === 'li') return `\n * ${this.blocks(el.children).trim()}\n`;
    if (el.name === 'ul' || el.name === 'ol') return `\n\n${this.blocks(el.children).trim()}\n\n`;
    return this.blocks(el.children);
  }

  private table(el: Element): string {
    const rows = DomUtils.findAll((e) => e.name === 'tr', el.children).map((tr) =>
      tr.children
        .filter((c): c is Element => isTag(c) && (c.name === 'td' || c.name === 'th'))
        .map((c) => squash(textOf(c))),
    );
    const width = Math.max(0, ...rows.map((r) => r.length));
    const sizes = Array.from({ length: width }, (_, i) => Math.max(0, ...rows.map((r) => (r[i] ?? '').length)));
    const lines = rows.map((r) =>
      sizes
        .map((size, i) => (r[i] ?? '').padEnd(size))
        .join('   ')
        .trimEnd(),
    );
    return `\n\n${lines.join('\n')}\n\n`;
  }

  private inline(node: ChildNode): string {
    if (isText(node)) return collapse(node.data);
    if (!isTag(node)) return '';
    if (node.name === 'br') return '\n';
    if (node.name === 'img') return '';
    let out = '';
    for (const child of node.children) out += this.inline(child);
    return out;
  }
}
