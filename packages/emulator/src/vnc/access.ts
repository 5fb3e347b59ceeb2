/** Who may watch a session (docs/decisions.md D5): the networks let in without a password, and the native port's credentials. */
import { createHash, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';

/**
 * `hitl_allowed_networks` as a block list: each entry an address (`10.1.2.3`) or a CIDR range
 * (`10.0.0.0/8`, `::1/128`). Entries that are neither let nobody in.
 */
export function allowedNetworks(entries: readonly string[] | null | undefined): BlockList | undefined {
  if (!entries?.length) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.trim().split('/');
    const family = isIP(address);
    if (family === 0) continue;
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else if (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32)) {
      list.addSubnet(address, Number(prefix), type);
    }
  }
  return list;
}

/** Whether `address` (as a socket gives it, IPv4-mapped IPv6 included) is inside `networks`. */
export function inNetworks(networks: BlockList | undefined, address: string): boolean {
  if (!networks || !address) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return networks.check(mapped[1] as string, 'ipv4') || networks.check(address, 'ipv6');
  const family = isIP(address);
  return family !== 0 && networks.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** Compare two secrets in time that depends on neither (both are hashed to one length first). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
