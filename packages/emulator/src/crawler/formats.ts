/**
 * A kept page's formats (converted once, by convert.ts, and kept in the crawl's file), sitemaps
 * read as XML, and CSS extraction rules (linkedom: a light DOM, built only for a crawl with rules).
 */

import type { ContentFormat } from 'cloud-browser/crawler';
import { Parser } from 'htmlparser2';
import { parseHTML } from 'linkedom';
import type { BodyRef } from './bodies.js';
import { convertPage, DERIVED_FORMATS, type DerivedFormat } from './convert.js';
import { encodeFormats } from './converter.js';
import type { PageRecord } from './types.js';

export { convertPage } from './convert.js';

/** A DOM element as linkedom gives it (its types are the DOM's). */
type El = Element;

/** A DOM of the page; a fragment (no `<html>` or `<body>`) is put in a body first, as a browser would. */
function documentOf(html: string): Document {
  const whole = /<(html|body)[\s>]/i.test(html);
  return parseHTML(whole ? html : `<!doctype html><html><head></head><body>${html}</body></html>`).document;
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
  const missing = missingFormats(page, formats);
  if (missing.length === 0) return;
  const { headings, bytes, lengths } = encodeFormats(convertPage(html, page.url, missing));
  keepEncoded(page, bytes, lengths);
  page.headings = headings;
}

/** The derived formats among `formats` that a page does not have yet. */
export function missingFormats(page: PageRecord, formats: readonly string[]): DerivedFormat[] {
  return DERIVED_FORMATS.filter((f) => formats.includes(f) && page.formats?.[f] === undefined);
}

/** Keep formats of a page, given as UTF-8 bytes one after another (see KeptRead), in its crawl's file: one write. */
export function keepEncoded(page: PageRecord, bytes: Uint8Array, lengths: readonly [ContentFormat, number][]): void {
  const bodies = page.bodies;
  if (!bodies) return;
  const refs: Partial<Record<ContentFormat, BodyRef>> = { ...page.formats };
  let at = bodies.put(bytes).at;
  for (const [f, length] of lengths) {
    refs[f] = { at, length };
    at += length;
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
