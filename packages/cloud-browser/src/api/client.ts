/**
 * The cloud browser's REST side (docs/decisions.md D2, docs/decisions.md D20 to docs/decisions.md D24): sessions, stop, credential vaults and their
 * items, extensions, recordings, unblock. On the browser URL's host under the matching HTTP scheme, the key
 * as `?key=`, the vault key only in `X-Vault-Key`.
 */
import { ConfigError, type ConfigIssue, ServiceError, TimeoutError } from '../errors.js';
import { show, toConfigIssues } from '../internal/issues.js';
import { numberIssues } from '../internal/knobs.js';
import { REDACTED, registerSecret } from '../internal/redact.js';
import {
  type CallOptions,
  type ClientKnobs,
  clientIssues,
  type RequestSpec,
  type ServiceClient,
  serviceClientFor,
} from '../internal/service-client.js';
import { ENV, env } from '../session/url.js';
import {
  type BrowserSessionRecord,
  type Extension,
  type Playback,
  type UnblockParams,
  type Vault,
  type VaultItem,
  type VaultItemInput,
  type VaultItemPatch,
  vaultItemSchema,
  wireSecret,
} from './schema.js';

/** Options of {@link CloudBrowserApi}. */
export interface CloudBrowserApiOptions extends ClientKnobs {
  /** The API key, sent as `?key=`. @default process.env.CLOUD_API_KEY */
  key?: string | undefined;
  /** The cloud browser's address (`wss://…`); the REST host is its HTTP twin. @default process.env.CLOUD_BROWSER_URL */
  browserUrl?: string | URL | undefined;
}

/** Defaults of {@link CloudBrowserApiOptions}. */
export const CLOUD_BROWSER_API_DEFAULTS = { timeout: 60_000, maxRetries: 3 } as const;

const inspect = Symbol.for('nodejs.util.inspect.custom');

/** Hide `fields` of `value` from `util.inspect` and `console.log` (they stay readable). */
function hidden<T extends object>(value: T, fields: readonly (keyof T)[]): T {
  for (const f of fields) registerSecret(value[f] as string | undefined);
  Object.defineProperty(value, inspect, {
    enumerable: false,
    value: () => ({ ...value, ...Object.fromEntries(fields.map((f) => [f, REDACTED])) }),
  });
  return value;
}

/** The REST host of a browser URL (docs/decisions.md D2): `wss:` gives `https:`, `ws:` gives `http:`. */
export function restBaseOf(browserUrl: string | URL): string {
  const url = new URL(String(browserUrl));
  const scheme = url.protocol === 'wss:' ? 'https:' : url.protocol === 'ws:' ? 'http:' : url.protocol;
  return `${scheme}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

function refuse(subject: string, issues: ConfigIssue[]): void {
  if (issues.length > 0) throw new ConfigError(subject, issues);
}

const id = (name: string, value: unknown): string => {
  if (typeof value !== 'string' || !/^[A-Za-z0-9._~-]{1,200}$/.test(value)) {
    throw new ConfigError(`${name}`, [
      { option: name, message: `\`${name}\` must be an id the service gave (got ${show(value)})` },
    ]);
  }
  return value;
};

const vaultKeyIssue = (key: unknown): ConfigIssue[] =>
  typeof key === 'string' && /^[A-Za-z0-9+/]{43}=$/.test(key)
    ? []
    : [
        {
          option: 'vaultKey',
          message: '`vaultKey` must be the base64 key of 32 bytes the vault was created or rotated with',
        },
      ];

/**
 * A client of the cloud browser's REST side, grouped by resource.
 *
 * @example
 * const api = new CloudBrowserApi({ browserUrl: emulator.browserUrl, key: emulator.apiKey });
 * const { vault, key } = await api.vaults.create({ name: 'Shop' }); // store `key`: it is shown once
 * await api.vaults.items.create(vault.id, key, { type: 'password', label: 'Shop', origin: 'https://shop.example', username: 'ada', secret: { password: 'p' } });
 */
/** Options of {@link CloudBrowserApi.runs}' `waitForPlayback`. */
export interface WaitForPlaybackOptions extends CallOptions {
  /** Give up after this long, ms. @default 180000 */
  timeout?: number | undefined;
  /** How long to wait between asks when the service gives no `retry_after_ms`, ms. @default 3000 */
  pollInterval?: number | undefined;
}

/** Defaults of `waitForPlayback` (those of the official SDK). */
export const WAIT_FOR_PLAYBACK_DEFAULTS = { timeout: 180_000, pollInterval: 3_000 } as const;

export class CloudBrowserApi {
  readonly baseUrl: string;
  readonly #http: ServiceClient;

  constructor(options: CloudBrowserApiOptions = {}) {
    const key = options.key ?? env(ENV.apiKey);
    const browserUrl = options.browserUrl ?? env(ENV.browserUrl);
    const issues = clientIssues(options, key, ENV.apiKey);
    let base: string | undefined;
    if (browserUrl !== undefined && URL.canParse(String(browserUrl))) {
      base = restBaseOf(browserUrl);
      if (!/^https?:/.test(base)) base = undefined;
    }
    if (!base) {
      issues.push({
        option: 'browserUrl',
        message: `\`browserUrl\` must be the cloud browser's ws(s):// or http(s):// address: pass it, or set ${ENV.browserUrl}`,
      });
    }
    refuse('cloud browser API options', issues);
    this.baseUrl = base as string;
    this.#http = serviceClientFor(options, key as string, this.baseUrl, CLOUD_BROWSER_API_DEFAULTS, 'api');
  }

  /** Printing the client never shows the key. */
  [inspect](): string {
    return `CloudBrowserApi { baseUrl: '${this.baseUrl}' }`;
  }

  async #json<T>(method: string, path: string, spec: RequestSpec): Promise<T> {
    const res = await this.#http.request(method, path, spec);
    const text = await res.text();
    try {
      return (text ? JSON.parse(text) : {}) as T;
    } catch {
      throw ServiceError.generate(
        { code: 'ERR::BROWSER::BAD_RESPONSE', message: `${method} ${path} answered something that is not JSON` },
        { status: res.status },
      );
    }
  }

  /** Running sessions (docs/decisions.md D20). */
  readonly sessions = {
    /** Every running session, named or not. */
    list: (options: CallOptions = {}) =>
      this.#json<{ sessions: BrowserSessionRecord[]; total: number }>('GET', '/sessions', {
        ...options,
        retry: 'always',
      }),
    /** End a session by run id or name: its browser closes, its socket with code 1000. */
    stop: (idOrName: string, options: CallOptions = {}) =>
      this.#json<Record<string, unknown>>('POST', `/session/${encodeURIComponent(id('idOrName', idOrName))}/stop`, {
        ...options,
        retry: 'when-service-says',
      }),
  };

  /** Credential vaults and their items (docs/decisions.md D21). The vault key travels only in `X-Vault-Key`. */
  readonly vaults = {
    /**
     * Create a vault. The answer's `key` is shown once and never again: store it. It is hidden
     * from `util.inspect`.
     */
    create: async (params: { name: string; description?: string }, options: CallOptions = {}) => {
      const issues: ConfigIssue[] = [];
      if (typeof params?.name !== 'string' || !/^[A-Za-z0-9]{1,64}$/.test(params.name))
        issues.push({
          option: 'name',
          message: `\`name\` must be 1 to 64 letters and digits (got ${show(params?.name)})`,
        });
      if (params?.description !== undefined && typeof params.description !== 'string')
        issues.push({ option: 'description', message: '`description` must be a string' });
      refuse('vault', issues);
      const body = await this.#json<{ vault: Vault; key: string; message?: string }>('POST', '/vault', {
        ...options,
        retry: 'when-service-says',
        json: params,
      });
      return hidden(body, ['key']);
    },
    list: async (options: CallOptions = {}) => {
      const body = await this.#json<{ vaults: Vault[] | null }>('GET', '/vault', { ...options, retry: 'always' });
      return { ...body, vaults: body.vaults ?? [] };
    },
    get: async (vaultId: string, options: CallOptions = {}) =>
      (await this.#json<{ vault: Vault }>('GET', `/vault/${id('vaultId', vaultId)}`, { ...options, retry: 'always' }))
        .vault,
    update: (vaultId: string, patch: { name?: string; description?: string }, options: CallOptions = {}) =>
      this.#json<{ vault: Vault }>('PATCH', `/vault/${id('vaultId', vaultId)}`, {
        ...options,
        retry: 'always',
        json: patch,
      }),
    delete: (vaultId: string, options: CallOptions = {}) =>
      this.#json<Record<string, unknown>>('DELETE', `/vault/${id('vaultId', vaultId)}`, {
        ...options,
        retry: 'always',
      }),
    /** Re-seal every item under a new key; the old key opens nothing after. The new `key` is hidden from inspect. */
    rotate: async (vaultId: string, currentKey: string, options: CallOptions = {}) => {
      refuse('vault rotation', vaultKeyIssue(currentKey));
      registerSecret(currentKey);
      const body = await this.#json<{ key: string; message?: string }>(
        'POST',
        `/vault/${id('vaultId', vaultId)}/rotate`,
        {
          ...options,
          retry: 'when-service-says',
          headers: { 'x-vault-key': currentKey },
        },
      );
      return hidden(body, ['key']);
    },
    items: {
      list: async (vaultId: string, options: CallOptions = {}) => {
        const body = await this.#json<{ items: VaultItem[] | null }>('GET', `/vault/${id('vaultId', vaultId)}/item`, {
          ...options,
          retry: 'always',
        });
        return body.items ?? [];
      },
      /** Add an item; its secret is sealed by the service under the vault key. */
      create: async (vaultId: string, vaultKey: string, item: VaultItemInput, options: CallOptions = {}) => {
        const parsed = vaultItemSchema.safeParse(item);
        refuse('vault item', [
          ...vaultKeyIssue(vaultKey),
          ...(parsed.success
            ? []
            : toConfigIssues(parsed.error.issues, ['type', 'label', 'origin', 'username', 'secret', 'metadata'])),
        ]);
        registerSecret(vaultKey);
        const value = parsed.data as VaultItemInput;
        return this.#json<{ item: VaultItem; message?: string }>('POST', `/vault/${id('vaultId', vaultId)}/item`, {
          ...options,
          retry: 'when-service-says',
          headers: { 'x-vault-key': vaultKey },
          json: { ...value, secret: wireSecret(value.type, value.secret as Record<string, unknown>) },
        });
      },
      /** Change an item; a new `secret` (with its `type`) needs the vault key. */
      update: async (
        vaultId: string,
        itemId: string,
        patch: VaultItemPatch,
        vaultKey?: string,
        options: CallOptions = {},
      ) => {
        const issues: ConfigIssue[] = [];
        let json: Record<string, unknown> = { ...patch };
        if (patch?.secret !== undefined) {
          issues.push(...vaultKeyIssue(vaultKey));
          const parsed = vaultItemSchema.safeParse({ label: 'x', origin: 'https://x.test', ...patch });
          if (!parsed.success) issues.push(...toConfigIssues(parsed.error.issues, ['type', 'secret']));
          else json = { ...patch, secret: wireSecret(patch.type, patch.secret as Record<string, unknown>) };
        }
        refuse('vault item change', issues);
        registerSecret(vaultKey);
        return this.#json<{ item?: VaultItem; message?: string }>(
          'PATCH',
          `/vault/${id('vaultId', vaultId)}/item/${id('itemId', itemId)}`,
          { ...options, retry: 'always', headers: vaultKey ? { 'x-vault-key': vaultKey } : {}, json },
        );
      },
      delete: (vaultId: string, itemId: string, options: CallOptions = {}) =>
        this.#json<Record<string, unknown>>('DELETE', `/vault/${id('vaultId', vaultId)}/item/${id('itemId', itemId)}`, {
          ...options,
          retry: 'always',
        }),
    },
  };

  /** Extensions sessions can run with `extensions: [id]` (docs/decisions.md D22). */
  readonly extensions = {
    /** Upload a `.zip` or `.crx`; `{ extension, is_update }`. */
    upload: async (file: Uint8Array | Blob, params: { filename?: string } = {}, options: CallOptions = {}) => {
      const filename = params.filename ?? 'extension.zip';
      if (!/\.(zip|crx)$/i.test(filename))
        refuse('extension upload', [{ option: 'filename', message: '`filename` must end in .zip or .crx' }]);
      if (!(file instanceof Uint8Array) && !(file instanceof Blob))
        refuse('extension upload', [
          { option: 'file', message: '`file` must be the bytes of a .zip or .crx, or a Blob' },
        ]);
      const blob = file instanceof Blob ? file : new Blob([file as Uint8Array<ArrayBuffer>]);
      return this.#json<{ extension: Extension; is_update: boolean }>('POST', '/extension', {
        ...options,
        retry: 'when-service-says',
        init: () => {
          const form = new FormData();
          form.set('file', blob, filename);
          return { body: form };
        },
      });
    },
    /** Install from a `.crx` URL. */
    fromUrl: (extensionUrl: string, options: CallOptions = {}) => {
      if (
        typeof extensionUrl !== 'string' ||
        !URL.canParse(extensionUrl) ||
        !/^https?:$/.test(new URL(extensionUrl).protocol)
      )
        refuse('extension', [{ option: 'extension_url', message: '`extension_url` must be an http(s) URL' }]);
      return this.#json<{ extension: Extension; is_update: boolean }>('POST', '/extension', {
        ...options,
        retry: 'when-service-says',
        json: { extension_url: extensionUrl },
      });
    },
    list: (options: CallOptions = {}) =>
      this.#json<{ extensions: Extension[]; quota: { used: number; limit: number } }>('GET', '/extension', {
        ...options,
        retry: 'always',
      }),
    get: async (extensionId: string, options: CallOptions = {}) => {
      const body = await this.#json<{ extension?: Extension } & Partial<Extension>>(
        'GET',
        `/extension/${id('extensionId', extensionId)}`,
        { ...options, retry: 'always' },
      );
      return (body.extension ?? body) as Extension;
    },
    delete: (extensionId: string, options: CallOptions = {}) =>
      this.#json<Record<string, unknown>>('DELETE', `/extension/${id('extensionId', extensionId)}`, {
        ...options,
        retry: 'always',
      }),
  };

  /** Recordings of `debug` sessions (docs/decisions.md D23). */
  readonly runs = {
    /** Where the recording of a run stands: `uploading` (ask again after `retry_after_ms`), `ready`, `unavailable` or `disabled`. */
    playback: (runId: string, options: CallOptions = {}) =>
      this.#json<Playback>('GET', `/run/${encodeURIComponent(id('runId', runId))}/playback`, {
        ...options,
        retry: 'always',
      }),
    /**
     * Ask until the recording is no longer `uploading`, waiting as long as the service says
     * (`retry_after_ms`, else `pollInterval`). Gives the last answer, whatever its status; a
     * `timeout` throws a {@link TimeoutError}.
     */
    waitForPlayback: async (runId: string, options: WaitForPlaybackOptions = {}): Promise<Playback> => {
      refuse(
        'waitForPlayback options',
        numberIssues({
          timeout: [options.timeout, { min: 0, unit: 'milliseconds' }],
          pollInterval: [options.pollInterval, { min: 1, max: 3_600_000, unit: 'milliseconds' }],
        }),
      );
      const clock = this.#http.clock;
      const started = clock.now();
      const timeout = options.timeout ?? WAIT_FOR_PLAYBACK_DEFAULTS.timeout;
      for (;;) {
        const playback = await this.runs.playback(runId, options);
        if (playback.status !== 'uploading') return playback;
        const left = timeout - (clock.now() - started);
        if (left <= 0) {
          throw new TimeoutError(`the recording of ${runId} was not ready within ${timeout} ms`);
        }
        const hint = Number(playback.retry_after_ms);
        const wait =
          Number.isFinite(hint) && hint > 0 ? hint : (options.pollInterval ?? WAIT_FOR_PLAYBACK_DEFAULTS.pollInterval);
        await clock.sleep(Math.min(wait, left, 60_000), options.signal);
      }
    },
    /** The WebM of a `ready` recording, as a stream (`video/webm`). */
    video: async (runId: string, options: CallOptions = {}): Promise<ReadableStream<Uint8Array>> => {
      const res = await this.#http.request('GET', `/run/${encodeURIComponent(id('runId', runId))}/video`, {
        ...options,
        retry: 'always',
        streaming: true,
      });
      return res.body ?? new ReadableStream({ start: (c) => c.close() });
    },
  };

  /**
   * Open a session already navigated to `url` (docs/decisions.md D24). Join it with
   * `connectPlaywright(chromium, result)`; its `ws_url` holds the key and is hidden from inspect.
   */
  async unblock(
    params: UnblockParams,
    options: CallOptions = {},
  ): Promise<{ ws_url: string; session_id: string; run_id: string; mcp_endpoint?: string }> {
    const issues: ConfigIssue[] = [];
    if (typeof params?.url !== 'string' || !URL.canParse(params.url) || !/^https?:$/.test(new URL(params.url).protocol))
      issues.push({ option: 'url', message: `\`url\` must be an http(s) URL (got ${show(params?.url)})` });
    issues.push(
      ...numberIssues({
        timeout: [params?.timeout, { min: 1, max: 1800, unit: 'seconds' }],
        browser_timeout: [params?.browser_timeout, { min: 1, max: 1800, unit: 'seconds' }],
      }),
    );
    refuse('unblock parameters', issues);
    const body = await this.#json<{ ws_url: string; session_id: string; run_id: string; mcp_endpoint?: string }>(
      'POST',
      '/unblock',
      { ...options, retry: 'when-service-says', json: params },
    );
    return hidden(body, ['ws_url']);
  }
}
