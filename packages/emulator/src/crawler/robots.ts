/**
 * What a site lets the crawler do: robots.txt (RFC 9309, through `robots-parser`: groups by
 * product token, longest match, `Allow` on a tie, `*` and `$`, the query included, escapes
 * normalised), and the page-level directives of `<meta name="robots">` and `X-Robots-Tag`.
 */
import robotsParserModule from 'robots-parser';
import { normaliseEscapes } from './urls.js';

// A CommonJS module whose types declare an ES default: its default import is the function itself.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

/** RFC 9309 2.5: a crawler parses at least the first 500 KiB of robots.txt. */
export const ROBOTS_MAX_BYTES = 500 * 1024;

/** The rules of one origin's robots.txt. */
export interface RobotsRules {
  allowed(url: URL): boolean;
  readonly sitemaps: readonly string[];
}

/** Nothing disallowed: robots.txt absent (a 4xx, RFC 9309 2.3.1.3). */
export const ALLOW_ALL: RobotsRules = { allowed: () => true, sitemaps: [] };
/** Everything disallowed: robots.txt unreachable (a 5xx or a network error, RFC 9309 2.3.1.4). */
export const DISALLOW_ALL: RobotsRules = { allowed: (url) => url.pathname === '/robots.txt', sitemaps: [] };

/**
 * The product token robots.txt groups are matched against: the user agent's first word without
 * its version (`MyBot/1.2 (+https://…)` → `MyBot`), or `*` when the crawl sends none.
 */
export function productToken(userAgent: string | undefined): string {
  const token = userAgent?.trim().split(/[\s/]/)[0];
  return token && /^[A-Za-z_-]+$/.test(token) ? token : '*';
}

/** Parse robots.txt served at `robotsUrl` for a crawler named `product`. */
export function parseRobotsTxt(robotsUrl: string, text: string, product: string): RobotsRules {
  // RFC 9309 2.2.2: escapes of unreserved characters compare unescaped, as the crawl's URLs are.
  const rules = text.replace(
    /^(\s*(?:allow|disallow)\s*:)(.*)$/gim,
    (_, field: string, value: string) => field + normaliseEscapes(value),
  );
  const robots = robotsParser(robotsUrl, rules);
  return {
    sitemaps: robots.getSitemaps(),
    // /robots.txt itself is always allowed (RFC 9309 2.2.2); a URL of another origin is not ours to judge.
    allowed: (url) => {
      if (url.pathname === '/robots.txt') return true;
      const same = new URL(url.href);
      same.pathname = normaliseEscapes(same.pathname);
      same.search = normaliseEscapes(same.search);
      return robots.isAllowed(same.href, product) !== false;
    },
  };
}

/** Page-level directives. */
export interface PageDirectives {
  /** Do not follow the page's links. */
  nofollow: boolean;
  /** Do not index the page (it is kept, not searched). */
  noindex: boolean;
}

/**
 * Read `index`/`follow` directives from `<meta name="robots">` contents and `X-Robots-Tag`
 * values: `noindex`, `nofollow`, `none`; a value prefixed by a bot's name (`otherbot: noindex`)
 * applies only to that bot.
 *
 * @example
 * pageDirectives(['noindex, nofollow'], '*') // { noindex: true, nofollow: true }
 */
export function pageDirectives(values: readonly string[], product: string): PageDirectives {
  const out: PageDirectives = { nofollow: false, noindex: false };
  for (const value of values) {
    let text = value;
    const named = /^\s*([A-Za-z_-]+)\s*:(?!\s*\/\/)(.*)$/.exec(value);
    if (named?.[1] && !/^(noindex|nofollow|none|all|index|follow|noarchive|nosnippet)$/i.test(named[1])) {
      if (named[1].toLowerCase() !== product.toLowerCase()) continue;
      text = named[2] ?? '';
    }
    for (const directive of text
      .toLowerCase()
      .split(',')
      .map((d) => d.trim())) {
      if (directive === 'nofollow' || directive === 'none') out.nofollow = true;
      if (directive === 'noindex' || directive === 'none') out.noindex = true;
    }
  }
  return out;
}
