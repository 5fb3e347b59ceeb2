/**
 * `cloud-browser/emulator` moved to its own package, `cloud-browser-emulator`, so that a service
 * that only connects Playwright does not install the emulator. This entry only says so.
 */
throw new Error(
  "cloud-browser/emulator moved to the package cloud-browser-emulator: run `npm install --save-dev cloud-browser-emulator` and import { startEmulator } from 'cloud-browser-emulator'",
);

export {};
