/**
 * The runtime-free part of verifying a delivery: options, headers, resource type, signature
 * and alert timestamp checks, and the Content-Encoding list. Shared by the Node receiver
 * (verify.ts: node:crypto and zlib, streaming) and the fetch-style one (web.ts: Web Crypto and
 * DecompressionStream); imports nothing of Node.
 */
import { ConfigError, WebhookError } from '../errors.js';
import { numberIssues } from '../internal/knobs.js';
import { registerSecret } from '../internal/redact.js';
import {
  DEFAULT_HEADER_PREFIX,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_TOLERANCE_SECONDS,
  HEADER_PREFIX,
  type HeaderNames,
  headerNames,
  RESOURCE_TYPES,
  type ResourceType,
} from './constants.js';

/** Headers as `fetch` or Node give them. */
export type HeadersInput = Headers | Record<string, string | string[] | undefined>;
/** What the receivers take besides the delivery itself. */
export interface ReceiverCheckOptions {
  /**
   * The account's signing secret, or several (rotation): a delivery signed by any is accepted.
   * In a list, an entry left undefined or empty (an unset `process.env.OLD_SIGNING_SECRET`) is
   * passed over; at least one secret must remain.
   */
  secrets: string | readonly (string | undefined)[];
  /** Largest body on the wire and decoded. @default 268435456 */
  maxBodyBytes?: number | undefined;
  /** Largest distance of an alert timestamp from now, seconds. @default 300 */
  toleranceSeconds?: number | undefined;
  /** The clock, in milliseconds. @default Date.now */
  now?: (() => number) | undefined;
  /**
   * The prefix of the delivery headers. The spec names `X-Service-Webhook-`; the live service
   * brands them `X-Scrapfly-Webhook-` (`LIVE_HEADER_PREFIX`): set that to receive its deliveries.
   * @default 'X-Service-Webhook-'
   */
  headerPrefix?: string | undefined;
}

/** A header by name, whatever the headers' shape. */
export function reader(headers: HeadersInput): (name: string) => string | undefined {
  if (typeof (headers as Headers).get === 'function') {
    const h = headers as Headers;
    return (name) => h.get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  let lower: Map<string, string | string[] | undefined> | undefined;
  return (name) => {
    // Node gives lower-case names; other objects may not, so fall back to a folded copy.
    let v = record[name];
    if (v === undefined) {
      lower ??= new Map(Object.entries(record).map(([k, value]) => [k.toLowerCase(), value]));
      v = lower.get(name);
    }
    return Array.isArray(v) ? v.join(', ') : v;
  };
}

function secretList(secrets: ReceiverCheckOptions['secrets']): string[] {
  const given = typeof secrets === 'string' ? [secrets] : Array.isArray(secrets) ? secrets : [secrets];
  const list = given.filter((s) => s !== undefined && s !== '');
  if (list.length === 0 || list.some((s) => typeof s !== 'string')) {
    throw new ConfigError('webhook receiver options', [
      {
        option: 'secrets',
        message:
          '`secrets` must be one or more non-empty signing secrets (undefined or empty entries of a list are passed over)',
      },
    ]);
  }
  for (const s of list) registerSecret(s);
  return list;
}

/** Options checked once, for receivers that verify many deliveries. */
export interface PreparedVerifyOptions {
  secrets: readonly string[];
  maxBodyBytes: number;
  toleranceSeconds: number;
  now: () => number;
  /** The header prefix as given, and the four names under it. */
  headerPrefix: string;
  headers: HeaderNames;
}

/**
 * Check the options of a receiver once (secrets present, remembered for redaction).
 *
 * @example
 * const prepared = prepareVerify({ secrets }); // then verifyPrepared(prepared, headers, body) per delivery
 */
export function prepareVerify(options: ReceiverCheckOptions): PreparedVerifyOptions {
  const prefix = options.headerPrefix ?? DEFAULT_HEADER_PREFIX;
  const issues = numberIssues({
    maxBodyBytes: [options.maxBodyBytes, { min: 1, max: 2 ** 32, unit: 'bytes' }],
    toleranceSeconds: [options.toleranceSeconds, { min: 0, max: 86_400 * 365, unit: 'seconds' }],
  });
  if (typeof prefix !== 'string' || !HEADER_PREFIX.test(prefix)) {
    issues.push({
      option: 'headerPrefix',
      message: '`headerPrefix` must be letters, digits and dashes ending with a dash, such as X-Scrapfly-Webhook-',
    });
  }
  const secrets = secretList(options.secrets);
  if (issues.length > 0) throw new ConfigError('webhook receiver options', issues);
  return {
    secrets,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    toleranceSeconds: options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS,
    now: options.now ?? Date.now,
    headerPrefix: prefix,
    headers: headerNames(prefix),
  };
}

/** What the headers say, checked: an unsigned ping, or a signed delivery to verify. */
export type CheckedHeaders =
  | { ping: true }
  | { ping: false; resourceType: ResourceType; signatures: string[]; prefix: string };

/**
 * Check the resource type, the signature headers and an alert's timestamp (docs/decisions.md D14 to docs/decisions.md D15). Throws
 * the {@link WebhookError} to answer (400 or 401).
 */
export function checkHeaders(
  options: PreparedVerifyOptions,
  header: (name: string) => string | undefined,
): CheckedHeaders {
  const { headers: names, headerPrefix } = options;
  const resourceType = header(names.resourceType)?.trim();
  if (!resourceType || !(RESOURCE_TYPES as readonly string[]).includes(resourceType)) {
    throw new WebhookError(
      400,
      resourceType
        ? `${headerPrefix}Resource-Type ${JSON.stringify(resourceType.slice(0, 40))} is not one of ${RESOURCE_TYPES.join(', ')}`
        : `${headerPrefix}Resource-Type is missing${headerPrefix === DEFAULT_HEADER_PREFIX ? ' (deliveries of the live service need headerPrefix: X-Scrapfly-Webhook-)' : ''}`,
    );
  }
  const given = [header(names.signature), header(names.signatureLowercase)]
    .map((s) => s?.trim())
    .filter((s): s is string => s !== undefined && s !== '');
  if (given.length === 0) {
    if (resourceType === 'ping') return { ping: true };
    throw new WebhookError(401, 'the delivery is not signed');
  }
  const signatures = given.filter((s) => /^[0-9a-fA-F]{64}$/.test(s));
  if (signatures.length === 0) throw new WebhookError(401, 'the signature is malformed: expected 64 hex characters');

  let prefix = '';
  if (resourceType === 'alert') {
    const stamp = header(names.timestamp)?.trim();
    if (!stamp) throw new WebhookError(401, `the alert has no ${headerPrefix}Timestamp`);
    if (!/^\d{1,15}$/.test(stamp))
      throw new WebhookError(401, 'the alert timestamp must be whole seconds since the epoch');
    const tolerance = options.toleranceSeconds;
    const skew = Math.abs(options.now() / 1000 - Number(stamp));
    if (skew > tolerance)
      throw new WebhookError(401, `the alert timestamp is ${Math.round(skew)} s from now, more than ${tolerance} s`);
    prefix = `${stamp}.`;
  }
  return { ping: false, resourceType: resourceType as ResourceType, signatures, prefix };
}

/** The Content-Encoding names to undo, last applied first (docs/decisions.md D16); `identity` dropped. */
export function encodingsToUndo(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '' && s !== 'identity')
    .reverse();
}

/** The 400 for an encoding a receiver cannot undo. */
export const unsupportedEncoding = (name: string, why = 'use gzip, deflate, br or identity') =>
  new WebhookError(400, `Content-Encoding ${JSON.stringify(name.slice(0, 40))} is not supported: ${why}`);

/** The 413 for a body over the limit. */
export const tooLarge = (max: number, where: string) =>
  new WebhookError(413, `the body is larger than ${max} bytes ${where}: the receiver's limit is maxBodyBytes`);

/** A Content-Length that is over the limit already. */
export function declaredTooLarge(header: (name: string) => string | undefined, max: number): number | undefined {
  const length = header('content-length')?.trim();
  const declared = length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
  if (declared !== undefined && declared > max) throw tooLarge(max, 'on the wire');
  return declared;
}
