/**
 * What the crawl reads of a page to go on: its links (absolute, in document order), its title and
 * its robots directives, tag by tag (docs/decisions.md D30). `parsePage` reads them with
 * htmlparser2's tokenizer alone; the conversion (convert.ts) feeds the same reader from the parse
 * that builds its tree.
 */
import { Parser } from 'htmlparser2';

/** `href` made absolute against `base`; undefined when it cannot be. */
export function resolve(href: string, base: string): string | undefined {
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return undefined;
  }
}

/** What a crawled page gives the crawl: its title, links, base and robots directives. */
export interface ParsedPage {
  title: string;
  /** Absolute, in document order. */
  links: { href: string; nofollow: boolean }[];
  /** The contents of `<meta name="robots">`. */
  robots: string[];
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

/** The links, base, robots directives and title of a page, tag by tag, whoever walks it. */
export class PageReader {
  private readonly raw: { href: string; nofollow: boolean }[] = [];
  private readonly robots: string[] = [];
  private base: string | undefined;
  #title: string | undefined;
  private inTitle = false;

  constructor(private readonly url: string) {}

  open(name: string, attrs: Record<string, string>): void {
    if ((name === 'a' || name === 'area') && attrs.href !== undefined)
      this.raw.push({ href: attrs.href, nofollow: attrs.rel !== undefined && /(^|\s)nofollow(\s|$)/i.test(attrs.rel) });
    else if (name === 'base' && attrs.href !== undefined && this.base === undefined)
      this.base = resolve(attrs.href, this.url);
    else if (name === 'meta' && attrs.name?.trim().toLowerCase() === 'robots' && attrs.content !== undefined)
      this.robots.push(attrs.content);
    else if (name === 'title' && this.#title === undefined) {
      this.inTitle = true;
      this.#title = '';
    }
  }

  text(text: string): void {
    if (this.inTitle) this.#title += text;
  }

  close(name: string): void {
    if (name === 'title') this.inTitle = false;
  }

  /** The page's `<title>`, white space squashed; empty without one. */
  get title(): string {
    return (this.#title ?? '').replace(/\s+/g, ' ').trim();
  }

  /** How the page's links resolve (against its `<base>` when it has one), once it is read. */
  resolver(): (href: string) => string | undefined {
    return linkResolver(this.base ?? this.url);
  }

  result(resolveHere = this.resolver()): ParsedPage {
    const links: ParsedPage['links'] = [];
    for (const link of this.raw) {
      const href = resolveHere(link.href);
      if (href) links.push({ href, nofollow: link.nofollow });
    }
    return { title: this.title, links, robots: this.robots };
  }
}
