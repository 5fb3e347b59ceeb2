/** Turns schema issues into the `{ option, message }` list of a {@link ConfigError}. */
import type { ConfigIssue } from '../errors.js';
import type { SchemaIssue } from './schema.js';

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] ?? 0;
      row[j] = Math.min(cur + 1, (row[j - 1] ?? 0) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] ?? 0;
}

/** The known name closest to `name`, when it is close enough to be a typo. */
export function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  const lower = name.toLowerCase().replace(/-/g, '_');
  for (const k of known) {
    const score = lower === k ? 0 : distance(lower, k);
    if (score < bestScore) {
      best = k;
      bestScore = score;
    }
  }
  return best !== undefined && bestScore <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/** The issue for an option name nobody knows, with a suggestion when it looks like a typo. */
export function unknownOption(name: string, known: readonly string[], what = 'option'): ConfigIssue {
  const guess = closest(name, known);
  const shown = `\`${JSON.stringify(name.length > 40 ? `${name.slice(0, 37)}...` : name).slice(1, -1)}\``;
  return {
    option: name,
    message: guess
      ? `unknown ${what} ${shown}: did you mean \`${guess}\`?`
      : `unknown ${what} ${shown}: remove it (known ${what}s are listed in the README)`,
  };
}

/** One `ConfigIssue` per schema issue; unknown keys become one issue each with a suggestion. */
export function toConfigIssues(issues: readonly SchemaIssue[], known: readonly string[]): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys ?? []) out.push(unknownOption(key, known));
      continue;
    }
    const option = issue.path.length > 0 ? issue.path.map(String).join('.') : '(options)';
    const message = issue.message.includes('`') ? issue.message : `\`${option}\`: ${issue.message}`;
    out.push({ option, message });
  }
  return out;
}

/** A short, safe picture of a value given for an option: for messages. */
export function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return String(v);
}
