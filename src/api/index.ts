/** `cloud-browser/api`: the cloud browser's REST side (sessions, vaults, extensions, unblock). */

export { isServiceError, ServiceError } from '../errors.js';
export type { CallOptions, Clock } from '../internal/service-client.js';
export { CLOUD_BROWSER_API_DEFAULTS, CloudBrowserApi, type CloudBrowserApiOptions, restBaseOf } from './client.js';
export {
  type BrowserSessionRecord,
  type Extension,
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
