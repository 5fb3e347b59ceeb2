/**
 * Secret redaction: the one place that decides what a secret looks like.
 * Every error, log line and printed URL goes through here.
 */

/** Query and JSON keys whose values are credentials. */
export const SECRET_KEYS = [
  'api_key',
  'key',
  'vault_key',
  'vnc_password',
  'rtc_password',
  'secret',
  'signing_secret',
  'password',
] as const;

/** The text that stands where a secret was. */
export const REDACTED = '***';

const keyAlternation = SECRET_KEYS.join('|');

// `key=value` in a query string, also when the query sits percent-encoded inside another URL.
const queryPattern = new RegExp(
  `(^|[?&#\\s"'(,;]|%26|%3F)(${keyAlternation})(=|%3D)((?:(?!%26)[^&#\\s"'<>,;)])+)`,
  'gi',
);
// `"key": "value"` in JSON and `key: 'value'` in util.inspect output.
const jsonPattern = new RegExp(
  `(?<![\\w-])(["']?)(${keyAlternation})\\1(\\s*:\\s*)(["'])((?:\\\\.|(?!\\4).)*)\\4`,
  'gi',
);
// `scheme://user:password@host`: the password part of any userinfo.
const userinfoPattern = /([a-z][a-z0-9+.-]*:\/\/[^/?#@\s:"']*:)([^/?#@\s"']+)(@)/gi;

// Secrets seen by this process (keys, passwords, signing secrets), so that a value
// that reaches a message outside any `key=` form is still scrubbed. Bounded so a
// long-lived process that rotates keys does not grow without end.
const MAX_KNOWN = 512;
const MIN_SECRET_LENGTH = 4;
const known = new Set<string>();

/**
 * Remember a secret value so that {@link redact} scrubs it wherever it appears.
 * Values shorter than four characters are ignored: scrubbing them would mangle ordinary text.
 */
export function registerSecret(value: unknown): void {
  if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) return;
  if (known.has(value)) {
    known.delete(value);
  } else if (known.size >= MAX_KNOWN) {
    const oldest = known.values().next().value;
    if (oldest !== undefined) known.delete(oldest);
  }
  known.add(value);
}

function forms(secret: string): string[] {
  const out = new Set([secret, encodeURIComponent(secret)]);
  out.add(new URLSearchParams({ s: secret }).toString().slice(2));
  return [...out];
}

/**
 * Replace every credential in `text` with `***`: the values of `api_key`, `key`,
 * `vault_key`, `vnc_password`, `rtc_password` (query or JSON form), the password of
 * any `user:password@` URL, every secret registered with {@link registerSecret}, and
 * every value of `extra`.
 *
 * @example
 * redact('wss://host/?api_key=abc123&timeout=60') // 'wss://host/?api_key=***&timeout=60'
 */
export function redact(text: string, extra: readonly string[] = []): string {
  let out = text
    .replace(queryPattern, (_m, lead: string, name: string, eq: string) => `${lead}${name}${eq}${REDACTED}`)
    .replace(
      jsonPattern,
      (_m, q: string, name: string, colon: string, quote: string) =>
        `${q}${name}${q}${colon}${quote}${REDACTED}${quote}`,
    )
    .replace(userinfoPattern, (_m, head: string, _pw: string, at: string) => `${head}${REDACTED}${at}`);
  const secrets = [...extra.filter((s) => s.length > 0), ...known].sort((a, b) => b.length - a.length);
  for (const secret of secrets) {
    for (const form of forms(secret)) {
      if (out.includes(form)) out = out.split(form).join(REDACTED);
    }
  }
  return out;
}

/**
 * The URL as text with every credential replaced by `***` (see {@link redact}).
 *
 * @example
 * redactUrl(new URL('wss://u:pw@host/?vault_key=AAAA')) // 'wss://u:***@host/?vault_key=***'
 */
export function redactUrl(url: URL | string): string {
  return redact(typeof url === 'string' ? url : url.href);
}

/**
 * A copy of `value` that is safe to keep as an error's `cause`: errors are copied with
 * their name, message, stack, `code` and own `cause` redacted; strings are redacted;
 * anything else is kept only as redacted text.
 */
export function redactCause(value: unknown, depth = 0): unknown {
  if (value === undefined || value === null) return value;
  if (typeof value === 'string') return redact(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return value;
  // Our own errors redact themselves when made; keep them whole so callers can read their fields.
  if (typeof value === 'object' && Symbol.for('cloud-browser.error-kinds') in value) return value;
  if (value instanceof Error) {
    const copy = new Error(redact(value.message));
    copy.name = value.name;
    if (value.stack !== undefined) copy.stack = redact(value.stack);
    const code = (value as { code?: unknown }).code;
    if (typeof code === 'string' || typeof code === 'number') Object.assign(copy, { code });
    if (depth < 8 && value.cause !== undefined) Object.assign(copy, { cause: redactCause(value.cause, depth + 1) });
    return copy;
  }
  try {
    return redact(JSON.stringify(value) ?? String(value));
  } catch {
    return redact(String(value));
  }
}
