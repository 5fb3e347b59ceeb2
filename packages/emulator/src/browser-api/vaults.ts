/**
 * Credential vaults (docs/decisions.md D21) with envelope encryption: each item's secret sealed with its own
 * random data key (AES-256-GCM), each data key sealed with the vault key. The vault key itself
 * is never stored, not even hashed: a sealed constant (a key check value) tells a right key
 * from a wrong one, and only opening it costs a decryption. Rotation re-seals the data keys.
 */
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { type VaultItemType, vaultItemSchema } from 'cloud-browser/api';
import { registerSecret } from 'cloud-browser/internal';
import { type Refusal, refusal } from '../http.js';

const CHECK = Buffer.from('cloud-browser vault key check v1');

/** AES-256-GCM: iv (12) | tag (16) | ciphertext, bound to `aad`. */
function seal(key: Buffer, plain: Buffer, aad: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** Open what {@link seal} sealed; undefined when the key or the binding is wrong. */
function open(key: Buffer, sealed: Buffer, aad: string): Buffer | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(sealed.subarray(12, 28));
    return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]);
  } catch {
    return undefined;
  }
}

/** What is stored of a vault: no key, only the sealed check value. */
interface StoredVault {
  id: string;
  owner: string;
  name: string;
  description: string | null;
  check: string;
  created_at: string;
  updated_at: string;
}

/** What is stored of an item: the secret and its data key, each sealed. */
interface StoredItem {
  id: string;
  vault_id: string;
  type: VaultItemType;
  label: string;
  origin: string;
  username: string | null;
  metadata: Record<string, unknown> | null;
  secret_blob: string;
  sealed_key: string;
  created_at: string;
  updated_at: string;
}

/** An item opened with its vault's key, for a session. */
export interface OpenedItem {
  type: VaultItemType;
  origin: string;
  username: string | null;
  secret: Record<string, unknown>;
}

/** The secret as the service takes it: the typed form `{ <type>: {...} }` or the flat one. */
function secretOf(type: VaultItemType, raw: unknown): Record<string, unknown> | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const typed = (raw as Record<string, unknown>)[type];
  const flat =
    typeof typed === 'object' && typed !== null ? (typed as Record<string, unknown>) : (raw as Record<string, unknown>);
  // The flat TOTP form names its seed `seed` (the envelope's `secret` is taken), and a flat
  // password may be the bare string.
  if (type === 'totp' && flat.seed !== undefined && flat.secret === undefined) {
    const { seed, ...rest } = flat;
    return { ...rest, secret: seed };
  }
  if (type === 'password' && typeof flat.password === 'object' && flat.password !== null)
    return flat.password as Record<string, unknown>;
  return flat;
}

const now = () => new Date().toISOString();
const shown = (v: StoredVault, items: number) => ({
  id: v.id,
  name: v.name,
  description: v.description,
  item_count: items,
  created_at: v.created_at,
  updated_at: v.updated_at,
});
const shownItem = ({ sealed_key: _k, metadata, ...item }: StoredItem) => ({
  ...item,
  ...(metadata ? { metadata } : {}),
});

/** The vaults of every key the emulator accepts. */
export class VaultStore {
  private readonly vaults = new Map<string, StoredVault>();
  private readonly items = new Map<string, StoredItem>();

  /** Everything stored, as stored: for tests that look for leaks. */
  snapshot(): unknown {
    return { vaults: [...this.vaults.values()], items: [...this.items.values()] };
  }

  private vault(owner: string, id: string): StoredVault | Refusal {
    const v = this.vaults.get(id);
    return v && v.owner === owner ? v : refusal(404, 'ERR::BROWSER::VAULT_NOT_FOUND', `no vault ${id}`);
  }

  private count(id: string): number {
    let n = 0;
    for (const i of this.items.values()) if (i.vault_id === id) n++;
    return n;
  }

  /** The vault key, when `header` opens the vault's check value. */
  private unlock(v: StoredVault, header: string | undefined): Buffer | Refusal {
    const key = header && /^[A-Za-z0-9+/]{43}=$/.test(header) ? Buffer.from(header, 'base64') : undefined;
    if (!key)
      return refusal(401, 'ERR::BROWSER::VAULT_KEY_INVALID', 'X-Vault-Key must be the vault key (base64 of 32 bytes)');
    registerSecret(header);
    const check = open(key, Buffer.from(v.check, 'base64'), v.id);
    return check?.equals(CHECK)
      ? key
      : refusal(401, 'ERR::BROWSER::VAULT_KEY_INVALID', 'X-Vault-Key does not open this vault');
  }

  create(owner: string, body: Record<string, unknown>) {
    if (typeof body.name !== 'string' || !/^[A-Za-z0-9]{1,64}$/.test(body.name))
      return refusal(400, 'ERR::BROWSER::INVALID_REQUEST', '`name` must be 1 to 64 letters and digits');
    for (const v of this.vaults.values())
      if (v.owner === owner && v.name === body.name)
        return refusal(409, 'ERR::BROWSER::VAULT_EXISTS', `a vault named ${body.name} exists`);
    const key = randomBytes(32);
    const id = `vault_${randomUUID().replace(/-/g, '')}`;
    const at = now();
    const vault: StoredVault = {
      id,
      owner,
      name: body.name,
      description: typeof body.description === 'string' ? body.description : null,
      check: seal(key, CHECK, id).toString('base64'),
      created_at: at,
      updated_at: at,
    };
    this.vaults.set(id, vault);
    const text = key.toString('base64');
    registerSecret(text);
    return { vault: shown(vault, 0), key: text, message: 'store this key: it is shown once and cannot be recovered' };
  }

  list(owner: string) {
    return {
      vaults: [...this.vaults.values()].filter((v) => v.owner === owner).map((v) => shown(v, this.count(v.id))),
    };
  }

  get(owner: string, id: string) {
    const v = this.vault(owner, id);
    return 'code' in v ? v : { vault: shown(v, this.count(v.id)) };
  }

  update(owner: string, id: string, body: Record<string, unknown>) {
    const v = this.vault(owner, id);
    if ('code' in v) return v;
    if (body.name !== undefined) {
      if (typeof body.name !== 'string' || !/^[A-Za-z0-9]{1,64}$/.test(body.name))
        return refusal(400, 'ERR::BROWSER::INVALID_REQUEST', '`name` must be 1 to 64 letters and digits');
      v.name = body.name;
    }
    if (body.description !== undefined) v.description = typeof body.description === 'string' ? body.description : null;
    v.updated_at = now();
    return { vault: shown(v, this.count(v.id)), message: 'vault updated' };
  }

  delete(owner: string, id: string) {
    const v = this.vault(owner, id);
    if ('code' in v) return v;
    this.vaults.delete(id);
    for (const [itemId, item] of this.items) if (item.vault_id === id) this.items.delete(itemId);
    return { success: true, message: 'vault deleted' };
  }

  rotate(owner: string, id: string, header: string | undefined) {
    const v = this.vault(owner, id);
    if ('code' in v) return v;
    const old = this.unlock(v, header);
    if (!Buffer.isBuffer(old)) return old;
    const next = randomBytes(32);
    for (const item of this.items.values()) {
      if (item.vault_id !== id) continue;
      const dataKey = open(old, Buffer.from(item.sealed_key, 'base64'), item.id);
      if (!dataKey) return refusal(500, 'ERR::BROWSER::VAULT_CORRUPT', `item ${item.id} could not be opened`);
      item.sealed_key = seal(next, dataKey, item.id).toString('base64');
    }
    v.check = seal(next, CHECK, v.id).toString('base64');
    v.updated_at = now();
    const text = next.toString('base64');
    registerSecret(text);
    return { key: text, message: 'store this key: the previous one opens nothing now' };
  }

  listItems(owner: string, id: string) {
    const v = this.vault(owner, id);
    if ('code' in v) return v;
    return { items: [...this.items.values()].filter((i) => i.vault_id === id).map(shownItem) };
  }

  private sealItem(key: Buffer, item: StoredItem, secret: Record<string, unknown>): void {
    const dataKey = randomBytes(32);
    item.secret_blob = seal(dataKey, Buffer.from(JSON.stringify(secret)), item.id).toString('base64');
    item.sealed_key = seal(key, dataKey, item.id).toString('base64');
  }

  createItem(owner: string, id: string, header: string | undefined, body: Record<string, unknown>) {
    const v = this.vault(owner, id);
    if ('code' in v) return v;
    const key = this.unlock(v, header);
    if (!Buffer.isBuffer(key)) return key;
    const type = body.type as VaultItemType;
    const secret = secretOf(type, body.secret);
    const parsed = vaultItemSchema.safeParse({ ...body, secret });
    if (!parsed.success) {
      return refusal(400, 'ERR::BROWSER::INVALID_ITEM', parsed.error.issues.map((i) => i.message).join('; '));
    }
    const at = now();
    const item: StoredItem = {
      id: `item_${randomUUID().replace(/-/g, '')}`,
      vault_id: id,
      type,
      label: parsed.data.label,
      origin: parsed.data.origin.replace(/\/$/, ''),
      username: parsed.data.username ?? null,
      metadata: parsed.data.metadata ?? null,
      secret_blob: '',
      sealed_key: '',
      created_at: at,
      updated_at: at,
    };
    this.sealItem(key, item, parsed.data.secret as Record<string, unknown>);
    this.items.set(item.id, item);
    return { item: shownItem(item), message: 'item created' };
  }

  updateItem(owner: string, id: string, itemId: string, header: string | undefined, body: Record<string, unknown>) {
    const v = this.vault(owner, id);
    if ('code' in v) return v;
    const item = this.items.get(itemId);
    if (!item || item.vault_id !== id) return refusal(404, 'ERR::BROWSER::VAULT_ITEM_NOT_FOUND', `no item ${itemId}`);
    const next = {
      type: (body.type ?? item.type) as VaultItemType,
      label: body.label ?? item.label,
      origin: body.origin ?? item.origin,
      username: body.username ?? item.username ?? undefined,
    };
    let secret: Record<string, unknown> | undefined;
    if (body.secret !== undefined) {
      secret = secretOf(next.type, body.secret);
    } else if (next.type !== item.type) {
      return refusal(400, 'ERR::BROWSER::INVALID_ITEM', 'a new `type` needs its `secret`');
    }
    const parsed = vaultItemSchema.safeParse({ ...next, secret: secret ?? placeholder(next.type) });
    if (!parsed.success)
      return refusal(400, 'ERR::BROWSER::INVALID_ITEM', parsed.error.issues.map((i) => i.message).join('; '));
    if (secret) {
      const key = this.unlock(v, header);
      if (!Buffer.isBuffer(key)) return key;
      this.sealItem(key, item, secret);
    }
    item.type = next.type;
    item.label = parsed.data.label;
    item.origin = parsed.data.origin.replace(/\/$/, '');
    item.username = parsed.data.username ?? null;
    if (body.metadata !== undefined) item.metadata = body.metadata as Record<string, unknown>;
    item.updated_at = now();
    return { item: shownItem(item), message: 'item updated' };
  }

  deleteItem(owner: string, id: string, itemId: string) {
    const v = this.vault(owner, id);
    if ('code' in v) return v;
    const item = this.items.get(itemId);
    if (!item || item.vault_id !== id) return refusal(404, 'ERR::BROWSER::VAULT_ITEM_NOT_FOUND', `no item ${itemId}`);
    this.items.delete(itemId);
    return { success: true, message: 'item deleted' };
  }

  /**
   * Open a vault by name for a session (docs/decisions.md D21): its items in plain text, for this session's
   * browser only. An unknown vault or a key that does not open it is a refusal.
   */
  openForSession(owner: string, name: string, key: string): OpenedItem[] | Refusal {
    const v = [...this.vaults.values()].find((x) => x.owner === owner && x.name === name);
    if (!v) return refusal(404, 'ERR::BROWSER::VAULT_NOT_FOUND', `no vault named ${name}`);
    const vaultKey = this.unlock(v, key);
    if (!Buffer.isBuffer(vaultKey)) return vaultKey;
    const out: OpenedItem[] = [];
    for (const item of this.items.values()) {
      if (item.vault_id !== v.id) continue;
      const dataKey = open(vaultKey, Buffer.from(item.sealed_key, 'base64'), item.id);
      const plain = dataKey && open(dataKey, Buffer.from(item.secret_blob, 'base64'), item.id);
      if (!plain) return refusal(500, 'ERR::BROWSER::VAULT_CORRUPT', `item ${item.id} could not be opened`);
      out.push({ type: item.type, origin: item.origin, username: item.username, secret: JSON.parse(plain.toString()) });
    }
    return out;
  }
}

/** A stand-in secret, to check the other fields of a change that keeps the secret. */
function placeholder(type: VaultItemType): Record<string, unknown> {
  if (type === 'password') return { password: 'x' };
  if (type === 'passkey') return { credentialId: 'AA', privateKey: 'AA' };
  if (type === 'cookie') return { name: 'x', value: '' };
  return { secret: 'AA' };
}
