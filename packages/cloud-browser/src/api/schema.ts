/**
 * The cloud browser's REST objects (docs/decisions.md D20 to docs/decisions.md D24): one zod schema for a vault item the caller
 * writes, its secret typed by its kind, and the types of what the service answers. Pure: no
 * I/O, no `node:` import.
 */
import { z } from 'zod';
import { show } from '../internal/issues.js';
import type { Agree, Assert, Schema } from '../internal/schema.js';

const text = (name: string) =>
  z
    .string({ error: (i) => `\`${name}\` must be a string (got ${show(i.input)})` })
    .min(1, { error: `\`${name}\` must not be empty` });

const origin = text('origin').refine(
  (s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol) && new URL(s).origin === s.replace(/\/$/, ''),
  { error: (i) => `\`origin\` must be an origin such as https://example.com, with no path (got ${show(i.input)})` },
);

const base64 = (name: string) =>
  text(name).regex(/^[A-Za-z0-9+/_-]+={0,2}$/, { error: `\`${name}\` must be base64 (or base64url)` });

/** A password for the login form of `origin`. */
const passwordSecret = z.strictObject({ password: text('secret.password') });
/** A WebAuthn credential: id and PKCS#8 private key as base64, for a virtual authenticator. */
const passkeySecret = z.strictObject({
  credentialId: base64('secret.credentialId'),
  privateKey: base64('secret.privateKey'),
  userHandle: base64('secret.userHandle').optional(),
  signCount: z.number().int().min(0).optional(),
});
/** A cookie set before the first page. */
const cookieSecret = z.strictObject({
  name: text('secret.name'),
  value: z.string(),
  domain: text('secret.domain').optional(),
  path: text('secret.path').optional(),
  secure: z.boolean().optional(),
  httpOnly: z.boolean().optional(),
  sameSite: z.enum(['Strict', 'Lax', 'None']).optional(),
  /** Seconds since the epoch. */
  expires: z.number().finite().optional(),
});
/** An RFC 6238 seed (base32), filled as a one-time code. */
const totpSecret = z.strictObject({
  secret: text('secret.secret').regex(/^[A-Z2-7]+=*$/i, { error: '`secret.secret` must be the base32 TOTP seed' }),
  issuer: z.string().optional(),
  account: z.string().optional(),
  algorithm: z.enum(['SHA1', 'SHA256', 'SHA512']).optional(),
  digits: z.number().int().min(6).max(8).optional(),
  period: z.number().int().min(1).max(300).optional(),
});

const common = {
  label: text('label'),
  origin,
  username: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
};

/** Kinds of vault items (docs/decisions.md D21). */
export const VAULT_ITEM_TYPES = ['password', 'passkey', 'cookie', 'totp'] as const;
/** One of {@link VAULT_ITEM_TYPES}. */
export type VaultItemType = (typeof VAULT_ITEM_TYPES)[number];

const zodVaultItem = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('password'), ...common, secret: passwordSecret }),
    z.strictObject({ type: z.literal('passkey'), ...common, secret: passkeySecret }),
    z.strictObject({ type: z.literal('cookie'), ...common, secret: cookieSecret }),
    z.strictObject({ type: z.literal('totp'), ...common, secret: totpSecret }),
  ],
  {
    error: (i) =>
      `\`type\` must be ${VAULT_ITEM_TYPES.join(', ')} (got ${show((i.input as { type?: unknown })?.type)})`,
  },
);

/** What every vault item has. */
interface VaultItemCommon {
  /** A name for people. */
  label: string;
  /** The origin the item is used on, such as `https://shop.example` (no path). */
  origin: string;
  username?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** A password, filled into the login form of its origin. */
export interface PasswordItemInput extends VaultItemCommon {
  type: 'password';
  secret: { password: string };
}

/** A WebAuthn credential for a virtual authenticator: id and PKCS#8 private key as base64. */
export interface PasskeyItemInput extends VaultItemCommon {
  type: 'passkey';
  secret: { credentialId: string; privateKey: string; userHandle?: string | undefined; signCount?: number | undefined };
}

/** A cookie, set before the first page. */
export interface CookieItemInput extends VaultItemCommon {
  type: 'cookie';
  secret: {
    name: string;
    value: string;
    domain?: string | undefined;
    path?: string | undefined;
    secure?: boolean | undefined;
    httpOnly?: boolean | undefined;
    sameSite?: 'Strict' | 'Lax' | 'None' | undefined;
    /** Seconds since the epoch. */
    expires?: number | undefined;
  };
}

/** An RFC 6238 seed (base32), filled as a one-time code. */
export interface TotpItemInput extends VaultItemCommon {
  type: 'totp';
  secret: {
    secret: string;
    issuer?: string | undefined;
    account?: string | undefined;
    algorithm?: 'SHA1' | 'SHA256' | 'SHA512' | undefined;
    /** 6 to 8. */
    digits?: number | undefined;
    /** Seconds, 1 to 300. */
    period?: number | undefined;
  };
}

/** A vault item to create: its `secret` typed by its `type`. */
export type VaultItemInput = PasswordItemInput | PasskeyItemInput | CookieItemInput | TotpItemInput;

// `VaultItemInput` is what users see; this fails to compile when the schema disagrees.
type _VaultItemAgrees = Assert<Agree<VaultItemInput, z.input<typeof zodVaultItem>>>;

/**
 * A vault item as the caller writes it (docs/decisions.md D21): its `secret` typed by its `type`.
 *
 * @example
 * vaultItemSchema.parse({ type: 'password', label: 'Shop', origin: 'https://shop.example', username: 'ada', secret: { password: 'p' } })
 */
export const vaultItemSchema: Schema<VaultItemInput> = zodVaultItem;

/** The secret of each kind of item. */
export type VaultItemSecret = VaultItemInput['secret'];

/** A change to an item: any field; `secret` (with its `type`) needs the vault key. */
export type VaultItemPatch = Partial<Omit<VaultItemInput, 'secret' | 'type'>> &
  ({ type?: undefined; secret?: undefined } | { type: VaultItemType; secret: VaultItemSecret });

/**
 * The secret as the wire takes it: the typed form, `{ <type>: {...} }`, which the service
 * accepts beside the flat one.
 */
export function wireSecret(type: VaultItemType, secret: Record<string, unknown>): Record<string, unknown> {
  return { [type]: secret };
}

/** A vault (docs/decisions.md D21): no secret material. */
export interface Vault {
  id: string;
  name: string;
  description: string | null;
  item_count: number;
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
}

/** A stored item (docs/decisions.md D21): the secret only as sealed ciphertext. */
export interface VaultItem {
  id: string;
  vault_id: string;
  type: VaultItemType;
  label: string;
  origin: string;
  username: string | null;
  /** Base64 ciphertext, useless without the vault key. */
  secret_blob: string;
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
}

/** A running session (docs/decisions.md D20). */
export interface BrowserSessionRecord {
  run_id: string;
  /** Its name, or null. */
  session: string | null;
  /** ISO 8601. */
  started_at: string;
  /** The options it was opened with, secrets redacted. */
  options: Record<string, unknown>;
  auto_close: boolean;
  [field: string]: unknown;
}

/** An uploaded extension (docs/decisions.md D22). */
export interface Extension {
  id: string;
  name: string;
  version: string;
  manifest_version: number;
  source: string;
  created_at: string;
  [field: string]: unknown;
}

/** What `unblock` asks (docs/decisions.md D24). */
export interface UnblockParams {
  url: string;
  country?: string | undefined;
  os?: string | undefined;
  browser_brand?: string | undefined;
  session?: string | undefined;
  /** Seconds for the unblock navigation. */
  timeout?: number | undefined;
  /** Seconds the browser lives. */
  browser_timeout?: number | undefined;
  enable_mcp?: boolean | undefined;
  debug?: boolean | undefined;
}

/** A recording's state (docs/decisions.md D23): `uploading` while it is made or finished, then one of the others for good. */
export type PlaybackStatus = 'ready' | 'uploading' | 'unavailable' | 'disabled';

/** `GET /run/{run_id}/playback` (docs/decisions.md D23). */
export interface Playback {
  available: boolean;
  status: PlaybackStatus;
  metadata: { duration_ms: number; width: number; height: number; frames: number } | null;
  video_url: string | null;
  retry_after_ms: number | null;
}
