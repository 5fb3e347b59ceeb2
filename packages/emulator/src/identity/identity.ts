/**
 * The identity a session's options ask for (docs/decisions.md D29): `os`, `browser_brand` and
 * `country` (with `lang`/`languages`) give one consistent user agent, `navigator.platform`,
 * `navigator.userAgentData` and `Sec-CH-UA*` headers, a mobile screen for phones and tablets,
 * a time zone, a place and a language; never `HeadlessChrome`. The strings are the emulator's
 * choice: the service's are not public.
 */
import type { ParsedBrowserUrl } from 'cloud-browser';
import { placeOf } from './places.js';

type Os = 'linux' | 'windows' | 'macos' | 'android' | 'iphone' | 'ipad';
type Brand = 'chrome' | 'edge' | 'brave' | 'opera';

/** `Emulation.setUserAgentOverride`'s client-hint metadata. */
export interface UserAgentMetadata {
  brands: { brand: string; version: string }[];
  fullVersionList: { brand: string; version: string }[];
  platform: string;
  platformVersion: string;
  architecture: string;
  model: string;
  mobile: boolean;
  bitness: string;
  wow64: boolean;
}

/** Everything a page, frame or worker of the session is told about itself. */
export interface Identity {
  userAgent: string;
  /** `navigator.platform`. */
  platform: string;
  metadata: UserAgentMetadata;
  /** `Accept-Language`, weighted by Chromium: `de-DE,de;q=0.9`. */
  acceptLanguage: string | undefined;
  /** The `Intl` locale. */
  locale: string | undefined;
  timezoneId: string | undefined;
  geolocation: { latitude: number; longitude: number; accuracy: number } | undefined;
  /** A phone's or tablet's screen, with touch. */
  screen: { width: number; height: number; deviceScaleFactor: number; mobile: boolean } | undefined;
}

interface OsFacts {
  /** The user agent's system part. */
  system: string;
  platform: string;
  hintPlatform: string;
  hintVersion: string;
  architecture: string;
  mobile: boolean;
  model: string;
  screen?: Identity['screen'];
}

const OS: Record<Os, OsFacts> = {
  windows: {
    system: 'Windows NT 10.0; Win64; x64',
    platform: 'Win32',
    hintPlatform: 'Windows',
    hintVersion: '15.0.0',
    architecture: 'x86',
    mobile: false,
    model: '',
  },
  macos: {
    system: 'Macintosh; Intel Mac OS X 10_15_7',
    platform: 'MacIntel',
    hintPlatform: 'macOS',
    hintVersion: '14.6.1',
    architecture: 'arm',
    mobile: false,
    model: '',
  },
  linux: {
    system: 'X11; Linux x86_64',
    platform: 'Linux x86_64',
    hintPlatform: 'Linux',
    hintVersion: '6.8.0',
    architecture: 'x86',
    mobile: false,
    model: '',
  },
  android: {
    system: 'Linux; Android 10; K',
    platform: 'Linux armv81',
    hintPlatform: 'Android',
    hintVersion: '14.0.0',
    architecture: 'arm',
    mobile: true,
    model: 'Pixel 8',
    screen: { width: 412, height: 915, deviceScaleFactor: 2.625, mobile: true },
  },
  iphone: {
    system: 'iPhone; CPU iPhone OS 18_1 like Mac OS X',
    platform: 'iPhone',
    hintPlatform: 'iOS',
    hintVersion: '18.1.0',
    architecture: 'arm',
    mobile: true,
    model: 'iPhone',
    screen: { width: 390, height: 844, deviceScaleFactor: 3, mobile: true },
  },
  ipad: {
    system: 'iPad; CPU OS 18_1 like Mac OS X',
    platform: 'iPad',
    hintPlatform: 'iOS',
    hintVersion: '18.1.0',
    architecture: 'arm',
    mobile: false,
    model: 'iPad',
    screen: { width: 820, height: 1180, deviceScaleFactor: 2, mobile: true },
  },
};

/** Each browser's own brand in client hints and the token it adds to the user agent (Opera's version runs 15 behind). */
const BRANDS: Record<
  Brand,
  { brand: string | undefined; token: (major: number, os: Os) => string; version: (major: number) => number }
> = {
  chrome: { brand: 'Google Chrome', token: () => '', version: (m) => m },
  brave: { brand: 'Brave', token: () => '', version: (m) => m },
  edge: {
    brand: 'Microsoft Edge',
    token: (m, os) => ` ${os === 'android' ? 'EdgA' : os === 'iphone' || os === 'ipad' ? 'EdgiOS' : 'Edg'}/${m}.0.0.0`,
    version: (m) => m,
  },
  opera: {
    brand: 'Opera',
    token: (m, os) => ` ${os === 'android' ? 'OPR' : 'OPR'}/${m - 15}.0.0.0`,
    version: (m) => m - 15,
  },
};

/** The user agent string of `os` and `brand` at Chromium `major`. */
function userAgentOf(os: Os, brand: Brand, major: number): string {
  const facts = OS[os];
  const token = BRANDS[brand].token(major, os);
  if (os === 'iphone' || os === 'ipad') {
    const name = brand === 'chrome' || brand === 'brave' ? 'CriOS' : '';
    const app = name ? ` ${name}/${major}.0.0.0` : token;
    return `Mozilla/5.0 (${facts.system}) AppleWebKit/605.1.15 (KHTML, like Gecko)${app} Mobile/15E148 Safari/604.1`;
  }
  const mobile = facts.mobile ? 'Mobile ' : '';
  return `Mozilla/5.0 (${facts.system}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 ${mobile}Safari/537.36${token}`;
}

/** Chromium's version from `Browser.getVersion`'s product (`HeadlessChrome/143.0.7499.4`). */
export function versionOf(product: string): { major: number; full: string } {
  const full = /\/(\d+\.\d+\.\d+\.\d+)/.exec(product)?.[1] ?? '143.0.0.0';
  return { major: Number(full.split('.')[0]), full };
}

/** The identity of a session with `options`, on a Chromium of `product`. */
export function identityOf(options: ParsedBrowserUrl, product: string): Identity {
  const os = (options.os ?? 'linux') as Os;
  const brand = (options.browser_brand ?? 'chrome') as Brand;
  const { major, full } = versionOf(product);
  const facts = OS[os];
  const own = BRANDS[brand];
  const brandVersion = own.version(major);
  const brands = [
    { brand: 'Chromium', version: String(major) },
    ...(own.brand ? [{ brand: own.brand, version: String(brandVersion) }] : []),
    { brand: 'Not_A Brand', version: '24' },
  ];
  const fullVersionList = brands.map((b) => ({
    brand: b.brand,
    version: b.brand === 'Not_A Brand' ? '24.0.0.0' : b.brand === 'Opera' ? `${brandVersion}.0.0.0` : full,
  }));
  const place = options.country ? placeOf(options.country) : undefined;
  const languages = options.languages ?? (options.lang ? [options.lang] : place ? [place.language] : undefined);
  return {
    userAgent: userAgentOf(os, brand, major),
    platform: facts.platform,
    metadata: {
      brands,
      fullVersionList,
      platform: facts.hintPlatform,
      platformVersion: facts.hintVersion,
      architecture: facts.architecture,
      model: facts.model,
      mobile: facts.mobile,
      bitness: '64',
      wow64: false,
    },
    acceptLanguage: languages?.join(','),
    locale: options.lang ?? languages?.[0],
    timezoneId: place?.timezoneId,
    geolocation: place ? { latitude: place.latitude, longitude: place.longitude, accuracy: 50 } : undefined,
    screen: facts.screen,
  };
}
