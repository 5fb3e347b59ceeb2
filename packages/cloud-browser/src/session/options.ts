/**
 * The session options' names, values, bounds and wire forms (docs/wire.md §2.4): no validation library,
 * so that what needs only these (the command's flags, the URL's text form) loads fast.
 */

/** Proxy pools of docs/wire.md §2.4. */
export const PROXY_POOLS = ['datacenter', 'residential'] as const;
/** Operating systems of docs/wire.md §2.4. */
export const OPERATING_SYSTEMS = ['linux', 'windows', 'macos', 'android', 'iphone', 'ipad'] as const;
/** Protocols `byop_proxy` may use (docs/wire.md §2.4). */
export const BYOP_PROTOCOLS = ['http', 'https', 'socks5', 'socks5h', 'socks5+udp', 'socks5h+udp'] as const;
/** Largest `timeout` the service accepts, seconds (docs/wire.md §10). */
export const MAX_TIMEOUT_SECONDS = 1800;
/** Largest number of `languages` entries (docs/wire.md §10). */
export const MAX_LANGUAGES = 3;

/** Options whose values are credentials: never echoed in a message. */
export const SECRET_OPTIONS = ['api_key', 'vault_key', 'vnc_password', 'rtc_password', 'byop_proxy'] as const;

/** A proxy pool: one of {@link PROXY_POOLS}. */
export type ProxyPool = (typeof PROXY_POOLS)[number];
/** An operating system the session's browser shows: one of {@link OPERATING_SYSTEMS}. */
export type OperatingSystem = (typeof OPERATING_SYSTEMS)[number];

/** Each session option's value, wire names (docs/wire.md §2.4). */
export interface SessionOptionValues {
  /** The proxy pool the session's traffic leaves through. */
  proxy_pool: ProxyPool;
  /** The operating system the browser shows. */
  os: OperatingSystem;
  /** A name: connecting again with it rejoins the same browser. */
  session: string;
  /** Two-letter country code of the proxy's exit. */
  country: string;
  /** The browser's language, such as `fr-FR`. */
  lang: string;
  /** Accept-Language tags, at most {@link MAX_LANGUAGES}. */
  languages: string | readonly string[];
  /** End the browser when the last client disconnects. */
  auto_close: boolean;
  /** Seconds before the session ends, 1 to {@link MAX_TIMEOUT_SECONDS} (the service's default is 900). */
  timeout: number;
  /** Record the session (a playback video). */
  debug: boolean;
  /** Ids of uploaded extensions to run. */
  extensions: string | readonly string[];
  block_images: boolean;
  block_styles: boolean;
  block_fonts: boolean;
  block_media: boolean;
  screenshot: boolean;
  /** The window size, `WIDTHxHEIGHT`. */
  resolution: string;
  /** An http or https URL the session opens first. */
  target_url: string;
  cache: boolean;
  blacklist: boolean;
  unblock: boolean;
  /** Seconds the unblocker may take. */
  unblock_timeout: number;
  /** The browser the session shows: `chrome`, `edge`, `brave`, `opera`. */
  browser_brand: string;
  /** Your own proxy, `protocol://user:password@host:port` (a secret: never echoed). */
  byop_proxy: string;
  /** Serve an MCP endpoint for the session. */
  enable_mcp: boolean;
  /** Solve the captchas the session's pages show. */
  solve_captcha: boolean;
  /** A credential vault's alphanumeric name; needs `vault_key`. */
  vault: string;
  /** The vault's key, base64 of 32 bytes (a secret); needs `vault`. */
  vault_key: string;
  /** Allow VNC; needs `vnc_password` unless `hitl_allowed_networks` is set. */
  enable_vnc: boolean;
  /** The VNC password (a secret); needs `enable_vnc: true`. */
  vnc_password: string;
  /** Allow WebRTC viewing; needs `rtc_password` unless `hitl_allowed_networks` is set. */
  enable_rtc: boolean;
  rtc_username: string;
  /** The WebRTC password (a secret); needs `enable_rtc: true`. */
  rtc_password: string;
  /** Networks (CIDR) whose clients may view without a password. */
  hitl_allowed_networks: string | readonly string[];
  /** The API key (a secret). */
  api_key: string;
}

/** How each option is written in the query string (docs/decisions.md D3). */
export type WireKind = 'boolean' | 'integer' | 'list' | 'string';

/** The text form of each option; typed so that a new option cannot be forgotten here. */
export const SESSION_WIRE_KINDS: { readonly [K in keyof SessionOptionValues]: WireKind } = {
  proxy_pool: 'string',
  os: 'string',
  session: 'string',
  country: 'string',
  lang: 'string',
  languages: 'list',
  auto_close: 'boolean',
  timeout: 'integer',
  debug: 'boolean',
  extensions: 'list',
  block_images: 'boolean',
  block_styles: 'boolean',
  block_fonts: 'boolean',
  block_media: 'boolean',
  screenshot: 'boolean',
  resolution: 'string',
  target_url: 'string',
  cache: 'boolean',
  blacklist: 'boolean',
  unblock: 'boolean',
  unblock_timeout: 'integer',
  browser_brand: 'string',
  byop_proxy: 'string',
  enable_mcp: 'boolean',
  solve_captcha: 'boolean',
  vault: 'string',
  vault_key: 'string',
  enable_vnc: 'boolean',
  vnc_password: 'string',
  enable_rtc: 'boolean',
  rtc_username: 'string',
  rtc_password: 'string',
  hitl_allowed_networks: 'list',
  api_key: 'string',
};

/** The wire names in the order they are sent. */
export const SESSION_OPTION_NAMES = Object.keys(SESSION_WIRE_KINDS) as (keyof SessionOptionValues)[];
