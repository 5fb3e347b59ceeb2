/** `cloud-browser-emulator`: a local emulator of the service, backed by a real Chromium. */
export { BASE_FLAGS, BrowserLaunchError, findChromium } from './chromium.js';
export type { DeliveryRecord, EmulatorWebhook } from './crawler/deliveries.js';
export { type Emulator, type EmulatorOptions, type RefusalFault, startEmulator } from './server.js';
export {
  serveTestCaptchas,
  TEST_CAPTCHA_HOLD_MS,
  TEST_CAPTCHA_KINDS,
  TEST_CAPTCHA_SCRIPT,
  type TestCaptchaKind,
  testCaptchaPage,
} from './service/widgets.js';
export type { EmulatorSessionInfo } from './session.js';
