/**
 * Build and check a cloud browser URL, then print it with its secrets hidden.
 * Run: CLOUD_API_KEY=... CLOUD_BROWSER_URL=wss://... npx tsx examples/build-url.ts
 */
import { buildBrowserUrl, isConfigError, redactUrl } from 'cloud-browser';

try {
  const url = buildBrowserUrl({
    proxy_pool: 'residential',
    country: 'us',
    languages: ['en-US', 'fr-FR'],
    timeout: 600,
    block_images: true,
    enable_vnc: true,
    vnc_password: 'choose-a-password',
  });
  console.log(redactUrl(url));
} catch (e) {
  if (!isConfigError(e)) throw e;
  for (const issue of e.issues) console.error(`${issue.option}: ${issue.message}`);
  process.exitCode = 1;
}
