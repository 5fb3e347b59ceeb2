/**
 * A crawled page's main content in every derived format, in one parse (docs/decisions.md D30):
 * htmlparser2 builds a light tree (no browser DOM), the page's chrome is dropped (navigation,
 * headers, footers, sidebars, forms, scripts, and containers named so by their class or id),
 * the main content is the element that holds most of what remains to read, permalink marks go
 * and links become absolute; then one walk each writes GitHub-flavoured Markdown (tables, fenced
 * code with its language, nested inline code as one span), plain text (tables in columns,
 * headings as written) and the content's HTML.
 */
import { type ChildNode, type Document, type Element, isTag, isText } from 'domhandler';
import { DomUtils, parseDocument } from 'htmlparser2';

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
/** Where the main content says it is. */
const MAIN_HINTS = ['main', 'article'];

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

const squash = (text: string) => text.replace(/\s+/g, ' ').trim();
const textOf = (node: ChildNode | Element): string => DomUtils.textContent(node);

/** `href` made absolute against `base`; undefined when it cannot be. */
export function resolve(href: string, base: string): string | undefined {
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return undefined;
  }
}

function isChrome(el: Element): boolean {
  if (DROPPED.has(el.name)) return true;
  const role = el.attribs.role;
  if (role && CHROME_ROLES.has(role)) return true;
  if (el.attribs['aria-hidden'] === 'true' || el.attribs.hidden !== undefined) return true;
  const names = `${el.attribs.class ?? ''} ${el.attribs.id ?? ''}`;
  return (
    names.length > 1 && CHROME_NAMES.test(names) && el.name !== 'body' && el.name !== 'main' && el.name !== 'article'
  );
}

/** Remove the chrome under `root`, permalink marks, and make links and images absolute. */
function clean(root: Element | Document, base: string): void {
  const walk = (parent: Element | Document) => {
    for (const child of [...parent.children]) {
      if (!isTag(child)) {
        if (child.type === 'comment' || child.type === 'directive') DomUtils.removeElement(child);
        continue;
      }
      if (isChrome(child)) {
        DomUtils.removeElement(child);
        continue;
      }
      if (child.name === 'a') {
        const href = child.attribs.href ?? '';
        const mark = PERMALINK_CLASS.test(child.attribs.class ?? '') || PERMALINK_TEXT.test(textOf(child));
        if (href.startsWith('#') && mark && !DomUtils.findOne((e) => e.name === 'img', child.children)) {
          DomUtils.removeElement(child);
          continue;
        }
        const absolute = href && resolve(href, base);
        if (absolute) child.attribs.href = absolute;
      } else if (child.name === 'img' && child.attribs.src) {
        const absolute = resolve(child.attribs.src, base);
        if (absolute) child.attribs.src = absolute;
      }
      walk(child);
    }
  };
  walk(root);
}

/** Characters of readable text under a node that are not link text. */
function weight(node: Element, memo: Map<Element, number>): number {
  const known = memo.get(node);
  if (known !== undefined) return known;
  let total = 0;
  for (const child of node.children) {
    if (isText(child)) total += child.data.replace(/\s+/g, '').length;
    else if (isTag(child)) total += child.name === 'a' ? 0 : weight(child, memo);
  }
  memo.set(node, total);
  return total;
}

/**
 * The element of the main content: a `<main>`, `role="main"` or a single `<article>` that holds
 * most of the text, else, from the body down, the child that holds three quarters of its
 * parent's text while one does.
 */
function mainOf(body: Element): Element {
  const memo = new Map<Element, number>();
  const total = weight(body, memo) || 1;
  for (const hint of MAIN_HINTS) {
    const found = DomUtils.findAll(
      (e) => e.name === hint || (hint === 'main' && e.attribs.role === 'main'),
      body.children,
    );
    if (found.length === 1 && found[0] && weight(found[0], memo) >= total * 0.5) return found[0];
  }
  let at = body;
  for (;;) {
    const own = weight(at, memo);
    const next = at.children.filter(isTag).find((c) => weight(c, memo) >= own * 0.75);
    if (!next || BLOCK.has(next.name) === false || next.name === 'p' || next.name === 'pre' || next.name === 'table')
      return at;
    at = next;
  }
}

/** The document's base for relative links: `<base href>` or the page's URL. */
function baseOf(doc: Document, url: string): string {
  const base = DomUtils.findOne((e) => e.name === 'base' && e.attribs.href !== undefined, doc.children);
  return (base && resolve(base.attribs.href ?? '', url)) || url;
}

/**
 * Convert a page fetched from `url` (its final URL).
 *
 * @example
 * convertPage('<nav>Home</nav><main><h1>Intro</h1><p>See <a href="/a">a</a>.</p></main>', 'http://x/').markdown
 * // '# Intro\n\nSee [a](http://x/a).'
 */
export function convertPage(html: string, url: string, formats: readonly DerivedFormat[] = DERIVED_FORMATS): Converted {
  return convertDocument(parseHtml(html), url, formats);
}

/** A page's tree, as the conversion reads it. */
export function parseHtml(html: string): Document {
  return parseDocument(html, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
}

/** Convert a parsed page (the tree is changed: read anything else of it first). */
export function convertDocument(doc: Document, url: string, formats: readonly DerivedFormat[]): Converted {
  const base = baseOf(doc, url);
  const pageTitle = squash(textOf(DomUtils.findOne((e) => e.name === 'title', doc.children) ?? doc));
  const body = DomUtils.findOne((e) => e.name === 'body', doc.children) ?? (doc as unknown as Element);
  clean(body, base);
  const main = mainOf(body);
  const heading =
    DomUtils.findOne((e) => e.name === 'h1', [main]) ?? DomUtils.findOne((e) => /^h[1-3]$/.test(e.name), [main]);
  const title = (heading ? squash(textOf(heading)) : '') || pageTitle;
  // Led by its title as an h1: the heading that says it goes.
  if (heading && squash(textOf(heading)) === title) DomUtils.removeElement(heading);
  const headings = DomUtils.findAll((e) => /^h[1-6]$/.test(e.name), [main]).map((h) => squash(textOf(h)));
  const out: Converted = { title, headings };
  if (formats.includes('clean_html')) {
    const lead = title ? `<h1>${escapeHtml(title)}</h1>\n` : '';
    out.clean_html = `${lead}${DomUtils.getInnerHTML(main, { decodeEntities: false })}`.trim();
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

/** Markdown's special characters in running text, escaped where they would mean something. */
/** Whether a text may hold something Markdown would read as syntax (a superset: checked, then escaped). */
const MAY_NEED_ESCAPE = /[\\*_`[\]<>]|^\s*(?:[-+>#]|\d+\.)/;

function escapeMarkdown(text: string): string {
  if (!MAY_NEED_ESCAPE.test(text)) return text;
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
const fenceFor = (code: string) => '`'.repeat(Math.max(3, ...[...code.matchAll(/`+/g)].map((m) => m[0].length + 1)));

/** Inline code as one span, whatever is nested in it; backticks inside get a longer fence. */
function codeSpan(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  if (!flat.trim()) return '';
  const ticks = '`'.repeat(Math.max(1, ...[...flat.matchAll(/`+/g)].map((m) => m[0].length + 1)));
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
    const text = run
      .replace(/[ \t]+/g, ' ')
      .replace(/ *\n */g, '\n')
      .trim();
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
    if (isText(node)) return escapeMarkdown(node.data.replace(/\s+/g, ' '));
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
    if (isText(node)) return node.data.replace(/\s+/g, ' ');
    if (!isTag(node)) return '';
    if (node.name === 'br') return '\n';
    if (node.name === 'img') return '';
    let out = '';
    for (const child of node.children) out += this.inline(child);
    return out;
  }
}
