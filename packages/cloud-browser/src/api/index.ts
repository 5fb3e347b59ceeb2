/** `cloud-browser/api`: the cloud browser's REST side (sessions, vaults, extensions, recordings, unblock). */

export { isServiceError, isTimeoutError, ServiceError, TimeoutError } from '../errors.js';
export type { CallOptions, Clock } from '../internal/service-client.js';
export {
  CLOUD_BROWSER_API_DEFAULTS,
  CloudBrowserApi,
  type CloudBrowserApiOptions,
  restBaseOf,
  WAIT_FOR_PLAYBACK_DEFAULTS,
  type WaitForPlaybackOptions,
} from './client.js';
export {
  type BrowserSessionRecord,
  type CookieItemInput,
  type Extension,
  type PasskeyItemInput,
  type PasswordItemInput,
  type Playback,
  type PlaybackStatus,
  type TotpItemInput,
  type UnblockParams,
  VAULT_ITEM_TYPES,
  type Vault,
  type VaultItem,
  type VaultItemInput,
  type VaultItemPatch,
  type VaultItemSecret,
  type VaultItemType,
  vaultItemSchema,
} from './schema.js';
