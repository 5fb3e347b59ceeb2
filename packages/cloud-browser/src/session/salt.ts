import { createHash } from 'node:crypto';

/**
 * The project salt (docs/wire.md §5, docs/decisions.md D4): the first 8 hex characters of SHA-256 of the API key.
 * The service sends it as `X-Browser-Project-Salt`; a native VNC client types `<salt>-<vnc_password>`.
 *
 * @example
 * projectSalt('scp-test-0000000000000000000000000000000000') // '701018da'
 */
export function projectSalt(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex').slice(0, 8);
}
