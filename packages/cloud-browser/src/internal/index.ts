/**
 * `cloud-browser/internal`: what the companion package `cloud-browser-emulator` shares with this
 * one and no user needs. Not a public API and not covered by semantic versioning: the two
 * packages are released together, and the emulator depends on this package's exact version.
 */
export { Progress } from '../cli/output.js';
export { interrupted } from '../cli/signals.js';
export { RETRYABLE_BROWSER_CODES } from '../connect/socket.js';
export { env } from '../session/url.js';
export { toConfigIssues } from './issues.js';
export { checkNumber, type NumberRule, numberIssues } from './knobs.js';
export { registerSecret } from './redact.js';
