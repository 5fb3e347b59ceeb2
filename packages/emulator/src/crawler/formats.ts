/**
 * What the crawl reads of a page (its links, title and robots directives, in one pass of
 * htmlparser2's tokenizer), its formats converted once and kept (convert.ts), and CSS
 * extraction rules (linkedom: a light DOM, built only for a crawl with rules).
 */

import type { ContentFormat } from 'cloud-browser/crawler';
import { type ChildNode, isTag, isText, type Document as Tree } from 'domhandler';
import { Parser } from 'htmlparser2';
import { parseHTML } from 'linkedom';
import type { BodyRef } from './bodies.js';
import { convertPage, DERIVED_FORMATS, resolve } from './convert.js';
import type { PageRecord } from './types.js';

export { convertPage } from './convert.js';

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

/** Links resolved already, by what they resolve against (an origin, a folder, or nothing) and the link. */
const resolved = new Map<string, string | undefined>();
const RESOLVED_MAX = 100_000;

/**
 * How a page's links resolve against `base`, remembered across pages: documentation repeats the
 * same sidebar on every page, a thousand links or more, and parsing a URL is the costliest step
 * of reading a link. A link that depends on the page itself (`#…`, `?…`, empty) is not kept.
 */
function linkResolver(base: string): (href: string) => string | undefined {
  let origin: string | undefined;
  let folder: string | undefined;
  try {
    const u = new URL(base);
    origin = u.origin;
    folder = `${u.origin}${u.pathname.slice(0, u.pathname.lastIndexOf('/') + 1)}`;
  } catch {}
  return (raw) => {
    const href = raw.trim();
    let scope: string | undefined;
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) scope = '';
    else if (href.startsWith('//')) scope = undefined;
    else if (href.startsWith('/')) scope = origin;
    else if (href !== '' && !href.startsWith('#') && !href.startsWith('?')) scope = folder;
    if (scope === undefined) return resolve(href, base);
    const key = `${scope}\u0000${href}`;
    if (resolved.has(key)) return resolved.get(key);
    const out = resolve(href, base);
    if (resolved.size >= RESOLVED_MAX) resolved.clear();
    resolved.set(key, out);
    return out;
  };
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
  const reader = new PageReader(url);
  const parser = new Parser(
    {
      onopentag: (name, attrs) => reader.open(name, attrs),
      ontext: (text) => reader.text(text),
      onclosetag: (name) => reader.close(name),
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  return reader.result();
}

/** What `parsePage` reads, from a page already parsed into a tree (for its conversion). */
export function parseTree(doc: Tree, url: string): ParsedPage {
  const reader = new PageReader(url);
  const walk = (nodes: ChildNode[]) => {
    for (const node of nodes) {
      if (isText(node)) reader.text(node.data);
      if (!isTag(node)) continue;
      reader.open(node.name, node.attribs);
      walk(node.children);
      reader.close(node.name);
    }
  };
  walk(doc.children);
  return reader.result();
}

/** The links, base, robots directives and title of a page, tag by tag, whoever walks it. */
class PageReader {
  private readonly raw: { href: string; nofollow: boolean }[] = [];
  private readonly robots: string[] = [];
  private base: string | undefined;
  private title: string | undefined;
  private inTitle = false;

  constructor(private readonly url: string) {}

  open(name: string, attrs: Record<string, string>): void {
    if ((name === 'a' || name === 'area') && attrs.href !== undefined)
      this.raw.push({ href: attrs.href, nofollow: (attrs.rel ?? '').toLowerCase().split(/\s+/).includes('nofollow') });
    else if (name === 'base' && attrs.href !== undefined && this.base === undefined)
      this.base = resolve(attrs.href, this.url);
    else if (name === 'meta' && attrs.name?.trim().toLowerCase() === 'robots' && attrs.content !== undefined)
      this.robots.push(attrs.content);
    else if (name === 'title' && this.title === undefined) {
      this.inTitle = true;
      this.title = '';
    }
  }

  text(text: string): void {
    if (this.inTitle) this.title += text;
  }

  close(name: string): void {
    if (name === 'title') this.inTitle = false;
  }

  result(): ParsedPage {
    const resolveHere = linkResolver(this.base ?? this.url);
    const links: ParsedPage['links'] = [];
    for (const link of this.raw) {
      const href = resolveHere(link.href);
      if (href) links.push({ href, nofollow: link.nofollow });
    }
    return { title: (this.title ?? '').replace(/\s+/g, ' ').trim(), links, robots: this.robots };
  }
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

/**
 * Convert a visited page's derived formats among `formats` that it does not have yet, in one
 * parse, and keep them on the record.
 */
export function convertFormats(page: PageRecord, formats: readonly ContentFormat[]): void {
  const html = bodyOf(page, page.html);
  if (html === undefined) return;
  const missing = DERIVED_FORMATS.filter((f) => formats.includes(f) && page.formats?.[f] === undefined);
  if (missing.length === 0) return;
  const { title: _title, headings, ...converted } = convertPage(html, page.url, missing);
  keepFormats(page, converted);
  page.headings = headings;
}

/** Keep formats of a page in its crawl's file of bodies. */
export function keepFormats(page: PageRecord, converted: Partial<Record<ContentFormat, string>>): void {
  const bodies = page.bodies;
  if (!bodies) return;
  const refs: Partial<Record<ContentFormat, BodyRef>> = { ...page.formats };
  for (const [f, text] of Object.entries(converted) as [ContentFormat, string | undefined][]) {
    if (text !== undefined) refs[f] = bodies.put(text);
  }
  page.formats = refs;
}

/** A body of the page, read back from its crawl's file; undefined when it has none. */
export function bodyOf(page: PageRecord, ref: BodyRef | undefined): string | undefined {
  return ref && page.bodies ? page.bodies.get(ref) : undefined;
}

/**
 * A visited page in one format, converted on first use and kept on the record, so that reading
 * a crawl's contents again converts nothing. Null for a page with nothing to show in it: a
 * text page has `text` and `markdown` (itself), a PDF or an image has none.
 */
export function contentOf(page: PageRecord, f: ContentFormat): string | null {
  if (page.status !== 'visited') return null;
  const kept = page.formats?.[f];
  if (kept !== undefined) return bodyOf(page, kept) ?? null;
  if (page.html !== undefined) {
    if (f === 'html') return bodyOf(page, page.html) ?? null;
    convertFormats(page, [f]);
    return bodyOf(page, page.formats?.[f]) ?? null;
  }
  if (page.text !== undefined && (f === 'text' || f === 'markdown')) return bodyOf(page, page.text) ?? null;
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
