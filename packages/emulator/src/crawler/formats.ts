/**
 * A crawled page read and converted, through well-kept libraries: linkedom (a light DOM) to read
 * it, Mozilla's Readability to find its main content (navigation, sidebars and footers dropped),
 * turndown for Markdown with GFM tables and fenced code, html-to-text for text with its tables
 * laid out in columns. Links are made absolute against `<base href>` or the page's final URL, and
 * permalink marks (`¶`, `#`) are dropped.
 */
import { Readability } from '@mozilla/readability';
import type { ContentFormat } from 'cloud-browser/crawler';
import { convert } from 'html-to-text';
import { Parser } from 'htmlparser2';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import type { PageRecord } from './crawl.js';

/** A DOM element as linkedom gives it (its types are the DOM's). */
type El = Element;

/** What a crawled page gives the crawl: its title, links, base and robots directives. */
export interface ParsedPage {
  title: string;
  /** Absolute, in document order. */
  links: { href: string; nofollow: boolean }[];
  /** The contents of `<meta name="robots">`. */
  robots: string[];
}

/** A DOM of the page; a fragment (no `<html>` or `<body>`) is put in a body first, as a browser would. */
function documentOf(html: string): Document {
  const whole = /<(html|body)[\s>]/i.test(html);
  return parseHTML(whole ? html : `<!doctype html><html><head></head><body>${html}</body></html>`).document;
}

function resolve(href: string, base: string): string | undefined {
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return undefined;
  }
}

/** The URL relative links of `document`, fetched from `url`, resolve against. */
function baseOf(document: Document, url: string): string {
  const href = document.querySelector('base[href]')?.getAttribute('href');
  return (href && resolve(href, url)) || url;
}

/**
 * Read what the crawl needs of a page fetched from `url` (its final URL, after redirects), in
 * one pass of htmlparser2's tokenizer: no DOM is built, a crawl reads thousands of pages.
 *
 * @example
 * parsePage('<base href="/docs/"><a href="intro">Intro</a>', 'http://127.0.0.1/x').links
 * // [{ href: 'http://127.0.0.1/docs/intro', nofollow: false }]
 */
export function parsePage(html: string, url: string): ParsedPage {
  const raw: { href: string; nofollow: boolean }[] = [];
  const robots: string[] = [];
  let base: string | undefined;
  let title: string | undefined;
  let inTitle = false;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if ((name === 'a' || name === 'area') && attrs.href !== undefined)
          raw.push({ href: attrs.href, nofollow: (attrs.rel ?? '').toLowerCase().split(/\s+/).includes('nofollow') });
        else if (name === 'base' && attrs.href !== undefined && base === undefined) base = resolve(attrs.href, url);
        else if (name === 'meta' && attrs.name?.trim().toLowerCase() === 'robots' && attrs.content !== undefined)
          robots.push(attrs.content);
        else if (name === 'title' && title === undefined) {
          inTitle = true;
          title = '';
        }
      },
      ontext(text) {
        if (inTitle) title += text;
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  const against = base ?? url;
  const links: ParsedPage['links'] = [];
  for (const link of raw) {
    const href = resolve(link.href, against);
    if (href) links.push({ href, nofollow: link.nofollow });
  }
  return { title: (title ?? '').replace(/\s+/g, ' ').trim(), links, robots };
}

/** The `<loc>`s of a sitemap, and whether it is a sitemap index (its locs are sitemaps), read as XML. */
export function sitemapLocs(xml: string): { index: boolean; locs: string[] } {
  const locs: string[] = [];
  let index = false;
  let loc: string | undefined;
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === 'sitemapindex') index = true;
        else if (name === 'loc') loc = '';
      },
      ontext(text) {
        if (loc !== undefined) loc += text;
      },
      onclosetag(name) {
        if (name === 'loc' && loc !== undefined) {
          if (loc.trim()) locs.push(loc.trim());
          loc = undefined;
        }
      },
    },
    { xmlMode: true, decodeEntities: true, recognizeCDATA: true },
  );
  parser.end(xml);
  return { index, locs };
}

/** Permalink marks that documentation generators put beside headings. */
const PERMALINK_CLASS = /(^|\s)(headerlink|id_link|anchor|anchorjs-link|heading-anchor|hash-link|permalink)(\s|$)/;
const PERMALINK_TEXT = /^[\s¶§#🔗]*$/u;
/** Containers of navigation Readability may keep when the page has little else. */
const BOILERPLATE =
  'nav, aside, footer, header, form, [role="navigation"], [role="banner"], [role="contentinfo"], [role="complementary"], [role="search"], script, style, noscript, template';

/** Drop permalink marks and make every link and image absolute. */
function tidy(document: Document, base: string): void {
  for (const a of [...document.querySelectorAll('a')]) {
    const href = a.getAttribute('href') ?? '';
    const mark = PERMALINK_CLASS.test(a.getAttribute('class') ?? '') || PERMALINK_TEXT.test(a.textContent ?? '');
    if (href.startsWith('#') && mark && !a.querySelector('img')) {
      a.remove();
      continue;
    }
    const absolute = href && resolve(href, base);
    if (absolute) a.setAttribute('href', absolute);
  }
  for (const img of document.querySelectorAll('img[src]')) {
    const absolute = resolve(img.getAttribute('src') ?? '', base);
    if (absolute) img.setAttribute('src', absolute);
  }
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const squash = (text: string | null | undefined) => (text ?? '').replace(/\s+/g, ' ').trim();

/**
 * The page's main content as HTML, led by its title as an `<h1>`: Readability's article, or
 * the body without its navigation when Readability finds none (a short page).
 */
function mainContent(html: string, url: string): { title: string; html: string } {
  const document = documentOf(html);
  const base = baseOf(document, url);
  tidy(document, base);
  const heading = document.querySelector('h1') ?? document.querySelector('h2');
  const fallbackTitle = squash(document.querySelector('title')?.textContent);
  let body: string | undefined;
  let title = squash(heading?.textContent) || fallbackTitle;
  try {
    const article = new Readability(document, {
      keepClasses: true,
      charThreshold: 200,
      // The article's own element, not Readability's wrapper page.
      serializer: (node) => (node as El).firstElementChild?.innerHTML ?? (node as El).innerHTML,
    }).parse();
    if (article?.content && squash(article.textContent).length > 0) {
      body = article.content;
      if (!title) title = squash(article.title);
    }
  } catch {}
  if (body === undefined) {
    const again = documentOf(html);
    tidy(again, base);
    for (const el of [...again.querySelectorAll(`${BOILERPLATE}, title, base, meta, link`)]) el.remove();
    body = again.querySelector('body')?.innerHTML ?? '';
  }
  // linkedom writes the elements Readability made in upper case; tag names are case-free.
  body = body.replace(/<(\/?)([A-Z][A-Z0-9]*)\b/g, (_, slash: string, tag: string) => `<${slash}${tag.toLowerCase()}`);
  if (!title) return { title, html: body.trim() };
  // Led by its title as an h1 (Readability turns the h1 it keeps into an h2).
  const content = documentOf(body);
  const first = content.querySelector('h1, h2, h3, p, pre, table, li');
  if (first && /^H[1-3]$/i.test(first.tagName) && squash(first.textContent) === title) first.remove();
  const rest = content.querySelector('body')?.innerHTML.trim() ?? '';
  return { title, html: `<h1>${escapeHtml(title)}</h1>\n${rest}` };
}

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
turndown.remove(['script', 'style', 'noscript', 'title', 'head']);
/** Any `<pre>`, with or without `<code>`, fenced and unescaped; the language from a class when one names it. */
turndown.addRule('pre', {
  filter: 'pre',
  replacement: (_content, node) => {
    const pre = node as El;
    const code = pre.textContent?.replace(/\n$/, '') ?? '';
    const fence = '`'.repeat(Math.max(3, ...[...code.matchAll(/`+/g)].map((m) => m[0].length + 1)));
    return `\n\n${fence}${languageOf(pre)}\n${code}\n${fence}\n\n`;
  },
});
/** A table as a GFM table: its first row the header, pipes in cells escaped, cells on one line. */
turndown.addRule('table', {
  filter: (node) => node.nodeName === 'TABLE' && !node.querySelector('table'),
  replacement: (_content, node) => {
    // turndown's DOM (domino) gives array-likes, not iterables.
    const rows = Array.from((node as El).querySelectorAll('tr')).map((tr) =>
      Array.from(tr.children)
        .filter((cell) => cell.nodeName === 'TH' || cell.nodeName === 'TD')
        .map((cell) => tableCell(turndown.turndown(cell.innerHTML))),
    );
    const width = Math.max(0, ...rows.map((r) => r.length));
    if (width === 0) return '';
    const line = (cells: string[]) => `| ${Array.from({ length: width }, (_, i) => cells[i] ?? '').join(' | ')} |`;
    const [head = [], ...rest] = rows;
    return `\n\n${[line(head), line(Array(width).fill('---')), ...rest.map(line)].join('\n')}\n\n`;
  },
});

/** A cell's Markdown on one line: pipes escaped, and no list-marker escape, a cell being no line start. */
function tableCell(markdown: string): string {
  return squash(markdown)
    .replace(/^\\([-+*])/, '$1')
    .replace(/^(\d+)\\\./, '$1.')
    .replace(/\|/g, '\\|');
}

/** `language-js`, `lang-js`, `highlight-python3`, `highlight-source-js` on the block or its wrappers. */
function languageOf(pre: El): string {
  for (let el: El | null = pre.querySelector('code') ?? pre, hops = 0; el && hops < 4; el = el.parentElement, hops++) {
    const match = /(?:^|\s)(?:language|lang|highlight-source|highlight)-([\w+#.-]+)/.exec(
      el.getAttribute('class') ?? '',
    );
    if (match?.[1] && match[1] !== 'default') return match[1];
  }
  return '';
}

const TEXT_OPTIONS = {
  wordwrap: false as const,
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, colSpacing: 3 } },
  ],
};

/** The derived formats of a page, from its main content. */
type Converted = Record<Exclude<ContentFormat, 'html'>, string>;

/**
 * A page in every derived format: `clean_html` its main content, `markdown` that content as
 * GFM, `text` it as plain text (tables in columns, headings as written).
 */
export function convertPage(html: string, url: string): Converted {
  const main = mainContent(html, url);
  return {
    clean_html: main.html,
    // A numbered heading needs no escaped dot: `# 7. Input` is no list.
    markdown: turndown
      .turndown(main.html)
      .replace(/^(#{1,6} [\d.]*\d)\\\./gm, '$1.')
      .trim(),
    text: convert(main.html, TEXT_OPTIONS)
      .replace(/\n{3,}/g, '\n\n')
      .trim(),
  };
}

/**
 * A visited page in one format, converted on first use and kept on the record, so that reading
 * a crawl's contents again converts nothing. Null for a page with nothing to show in it: a
 * text page has `text` and `markdown` (itself), a PDF or an image has none.
 */
export function contentOf(page: PageRecord, f: ContentFormat): string | null {
  if (page.status !== 'visited') return null;
  const kept = page.formats?.[f];
  if (kept !== undefined) return kept;
  if (page.html !== undefined) {
    if (f === 'html') return page.html;
    page.formats = { ...page.formats, ...convertPage(page.html, page.url) };
    return page.formats[f] ?? null;
  }
  if (page.text !== undefined && (f === 'text' || f === 'markdown')) return page.text;
  return null;
}

/**
 * Apply CSS-selector extraction rules: `{ name: 'selector' }` or
 * `{ name: { selector, type?: 'text' | 'html' | 'attribute', attribute?, multiple? } }`.
 * Rules of other shapes are recorded but not applied.
 */
export function extract(html: string, rules: Record<string, unknown>): Record<string, unknown> {
  const document = documentOf(html);
  const out: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(rules)) {
    const spec =
      typeof rule === 'string'
        ? { selector: rule }
        : (rule as { selector?: unknown; type?: unknown; attribute?: unknown; multiple?: unknown });
    if (typeof spec?.selector !== 'string') continue;
    const pick = (el: El) =>
      spec.type === 'html'
        ? el.innerHTML
        : spec.type === 'attribute' && typeof spec.attribute === 'string'
          ? (el.getAttribute(spec.attribute) ?? null)
          : (el.textContent ?? '').trim();
    try {
      out[name] = spec.multiple
        ? [...document.querySelectorAll(spec.selector)].map(pick)
        : (() => {
            const el = document.querySelector(spec.selector as string);
            return el ? pick(el) : null;
          })();
    } catch {
      out[name] = null;
    }
  }
  return out;
}
