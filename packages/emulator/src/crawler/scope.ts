/** Where an emulated crawl may go: loopback hosts only, path patterns, robots.txt. */

/** Hosts the emulator reaches: this machine only, as the README promises. */
export const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\]|[a-z0-9-]+\.localhost)$/i;

/** Glob-style path patterns: `*` within a segment, `**` across segments; a pattern without `*` is a prefix. */
export function pathMatcher(patterns: readonly string[]): (path: string) => boolean {
  const regexes = patterns.map((p) => {
    if (!p.includes('*')) return new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')}`);
    const body = p
      .split('**')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
      .join('.*');
    return new RegExp(`^${body}$`);
  });
  return (path) => regexes.some((r) => r.test(path));
}

/** robots.txt rules for `User-agent: *` (longest match wins, Allow over Disallow on a tie). */
export function parseRobots(text: string): { allowed(path: string): boolean; sitemaps: string[] } {
  const rules: { allow: boolean; path: string }[] = [];
  const sitemaps: string[] = [];
  let applies = false;
  let inGroup = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*/, '').trim();
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const field = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (field === 'sitemap') sitemaps.push(value);
    else if (field === 'user-agent') {
      if (!inGroup) applies = false;
      inGroup = true;
      if (value === '*') applies = true;
    } else {
      inGroup = false;
      if (applies && (field === 'allow' || field === 'disallow') && value)
        rules.push({ allow: field === 'allow', path: value });
    }
  }
  return {
    sitemaps,
    allowed(path) {
      let best: { allow: boolean; path: string } | undefined;
      for (const r of rules) {
        if (
          path.startsWith(r.path.replace(/\*$/, '')) &&
          (!best || r.path.length > best.path.length || (r.path.length === best.path.length && r.allow))
        )
          best = r;
      }
      return best?.allow ?? true;
    },
  };
}
