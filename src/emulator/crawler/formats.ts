/** Page contents in the four formats of spec 2.1, through well-kept libraries. */
import { convert } from 'html-to-text';
import { type HTMLElement, parse } from 'node-html-parser';
import TurndownService from 'turndown';
import type { ContentFormat } from '../../crawler/schema.js';

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
turndown.remove(['script', 'style', 'noscript', 'title', 'head']);

/** What a crawled page gives: its links, title and a parsed root for extraction. */
export interface ParsedPage {
  title: string;
  links: { href: string; nofollow: boolean }[];
  root: HTMLElement;
}

export function parsePage(html: string): ParsedPage {
  const root = parse(html, {
    comment: false,
    blockTextElements: { script: true, style: true, noscript: true, pre: true },
  });
  const links = root.querySelectorAll('a[href]').map((a) => ({
    href: a.getAttribute('href') ?? '',
    nofollow: (a.getAttribute('rel') ?? '').toLowerCase().split(/\s+/).includes('nofollow'),
  }));
  return { title: root.querySelector('title')?.text.trim() ?? '', links, root };
}

/** The page without scripts, styles and comments: `clean_html`. */
export function cleanHtml(html: string): string {
  const root = parse(html, { comment: false });
  for (const el of root.querySelectorAll('script, style, noscript, template')) el.remove();
  return root.toString();
}

/** The page in one format. */
export function format(html: string, name: ContentFormat): string {
  if (name === 'html') return html;
  if (name === 'clean_html') return cleanHtml(html);
  if (name === 'markdown') return turndown.turndown(cleanHtml(html)).trim();
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
    ],
  }).trim();
}

/**
 * Apply CSS-selector extraction rules: `{ name: 'selector' }` or
 * `{ name: { selector, type?: 'text' | 'html' | 'attribute', attribute?, multiple? } }`.
 * Rules of other shapes are recorded but not applied.
 */
export function extract(root: HTMLElement, rules: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(rules)) {
    const spec =
      typeof rule === 'string'
        ? { selector: rule }
        : (rule as { selector?: unknown; type?: unknown; attribute?: unknown; multiple?: unknown });
    if (typeof spec?.selector !== 'string') continue;
    const pick = (el: HTMLElement) =>
      spec.type === 'html'
        ? el.innerHTML
        : spec.type === 'attribute' && typeof spec.attribute === 'string'
          ? (el.getAttribute(spec.attribute) ?? null)
          : el.text.trim();
    try {
      out[name] = spec.multiple
        ? root.querySelectorAll(spec.selector).map(pick)
        : (() => {
            const el = root.querySelector(spec.selector as string);
            return el ? pick(el) : null;
          })();
    } catch {
      out[name] = null;
    }
  }
  return out;
}
