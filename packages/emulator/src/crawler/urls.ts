/**
 * URL normalisation as real crawlers apply it, so that variants of one page are fetched once:
 * fragment dropped, scheme and host lower-cased and default port dropped (WHATWG URL does
 * those), an empty query dropped, percent-escapes upper-cased and unreserved characters
 * unescaped (RFC 3986 6.2.2), and session-id parameters removed, so that a site that puts a
 * fresh session id in every link is not an endless trap.
 */

/** Query parameters that carry a session id: they name no page. */
const SESSION_PARAMS = new Set([
  'sid',
  'sessionid',
  'session_id',
  'jsessionid',
  'phpsessid',
  'aspsessionid',
  'cfid',
  'cftoken',
]);
/** Path parameters of the same kind: `/page;jsessionid=ABC`. */
const SESSION_PATH_PARAM = /;(?:jsessionid|sessionid|sid|phpsessid)=[^/?#;]*/gi;
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** `%7e` → `~`, `%2f` → `%2F`: one spelling for each octet (RFC 3986 6.2.2.1, 6.2.2.2). */
export function normaliseEscapes(text: string): string {
  return text.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

/**
 * The one spelling of `raw` (resolved against `base`) the crawl keys its pages by, or undefined
 * when it is not an http(s) URL.
 *
 * @example
 * normaliseUrl('HTTP://127.0.0.1:80/a/%7euser/?#top') // 'http://127.0.0.1/a/~user/'
 */
export function normaliseUrl(raw: string, base?: string | URL): URL | undefined {
  let url: URL;
  try {
    url = new URL(raw.trim(), base);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  url.hash = '';
  url.username = '';
  url.password = '';
  url.pathname = normaliseEscapes(url.pathname.replace(SESSION_PATH_PARAM, ''));
  const kept = url.search
    .slice(1)
    .split('&')
    .filter((pair) => pair !== '' && !SESSION_PARAMS.has(decodeSafely(pair.split('=')[0] ?? '').toLowerCase()));
  // Also drops a bare `?`, which `url.search` reads as '' but `href` keeps.
  url.search = kept.length ? `?${normaliseEscapes(kept.join('&'))}` : '';
  return url;
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
