/**
 * Options built and validated per second through `buildBrowserUrl`, against a
 * hand-written `URLSearchParams` encoding of the same options, in the same run.
 * Goal: validation costs less than 5x the bare encoding.
 */
import { buildBrowserUrl } from '../packages/cloud-browser/src/index.js';
import { median, opsPerSecond, pairedRounds, report, showRatios } from './lib.js';

const options = {
  browser_url: 'wss://browser.test/',
  api_key: 'scp-test-0000000000000000000000000000000000',
  proxy_pool: 'residential',
  os: 'windows',
  country: 'us',
  languages: ['en-US', 'fr-FR', 'de'],
  timeout: 900,
  block_images: true,
  block_fonts: true,
  resolution: '1920x1080',
  session: 'checkout-flow',
  auto_close: false,
  enable_vnc: true,
  vnc_password: 'hunter22',
  byop_proxy: 'socks5h://user:pass@proxy.test:1080',
} as const;

function bare(): URL {
  const url = new URL(options.browser_url);
  const q = new URLSearchParams();
  q.set('proxy_pool', options.proxy_pool);
  q.set('os', options.os);
  q.set('session', options.session);
  q.set('country', options.country);
  q.set('languages', options.languages.join(','));
  q.set('auto_close', String(options.auto_close));
  q.set('timeout', String(options.timeout));
  q.set('block_images', String(options.block_images));
  q.set('block_fonts', String(options.block_fonts));
  q.set('resolution', options.resolution);
  q.set('byop_proxy', options.byop_proxy);
  q.set('enable_vnc', String(options.enable_vnc));
  q.set('vnc_password', options.vnc_password);
  q.set('api_key', options.api_key);
  url.search = q.toString();
  return url;
}

if (buildBrowserUrl(options).href !== bare().href)
  throw new Error('the two encodings differ: the comparison is unfair');

// Paired rounds, alternating which side goes first: single measurements swung from 4 to 9.
const rounds = await pairedRounds(
  9,
  async () => opsPerSecond(() => buildBrowserUrl(options), 3, 150),
  async () => opsPerSecond(bare, 3, 150),
  (opsPerSec) => 1 / opsPerSec,
);
const ratio = rounds.ratio;
report(
  'url: buildBrowserUrl vs bare URLSearchParams',
  ratio,
  '< 5',
  ratio < 5,
  `median of 9 paired rounds (${showRatios(rounds.ratios)}); median ours ${Math.round(median(rounds.ours)).toLocaleString('en')} ops/s, baseline ${Math.round(median(rounds.bare)).toLocaleString('en')} ops/s`,
);
