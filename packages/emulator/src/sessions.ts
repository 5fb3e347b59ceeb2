/** The emulator's running browser sessions: by run id, and by name within each key. */
import type { ParsedBrowserUrl } from 'cloud-browser';
import type { ExtensionStore } from './browser-api/extensions.js';
import type { SessionHost } from './browser-api/routes.js';
import type { VaultStore } from './browser-api/vaults.js';
import { isRefusal, type Refusal, refusal } from './http.js';
import type { Part } from './parts.js';
import type { WarmPool } from './pool.js';
import type { RecordingStore } from './recording/store.js';
import { EmulatedSession } from './session.js';

/** What the registry opens sessions with. */
export interface SessionRegistryOptions {
  executable: string;
  pool: WarmPool;
  vaults: VaultStore;
  extensions: ExtensionStore;
  recordings: RecordingStore;
  now?: (() => number) | undefined;
  /** A session's MCP endpoint address, for those opened with `enable_mcp`. */
  mcpEndpoint?: ((session: EmulatedSession) => string | undefined) | undefined;
}

/** The sessions of one emulator; stopping it ends every session (1001, going away). */
export class SessionRegistry implements Part {
  readonly name = 'sessions';
  readonly #byRunId = new Map<string, EmulatedSession>();
  readonly #named = new Map<string, EmulatedSession>();

  constructor(private readonly options: SessionRegistryOptions) {}

  /** Every running session. */
  all(): EmulatedSession[] {
    return [...this.#byRunId.values()];
  }

  /** The running sessions of `key`. */
  of(key: string): EmulatedSession[] {
    return this.all().filter((s) => s.options.api_key === key);
  }

  byRunId(runId: string): EmulatedSession | undefined {
    return this.#byRunId.get(runId);
  }

  /** The session of `key` with this run id or name. */
  find(key: string, idOrName: string): EmulatedSession | undefined {
    const s = this.#byRunId.get(idOrName) ?? this.#named.get(nameKey(key, idOrName));
    return s?.options.api_key === key ? s : undefined;
  }

  /** What the browser's REST side needs of the sessions. */
  host(browserUrl: () => string): SessionHost {
    return {
      list: (key) => this.of(key),
      find: (key, idOrName) => this.find(key, idOrName),
      open: (wanted) => this.open(wanted),
      browserUrl,
    };
  }

  /**
   * Open a session as a connection with these options asks: its vault opened, its extensions
   * found, a browser started (or taken from the warm pool); or the named session of this key
   * that is still running.
   */
  async open(wanted: ParsedBrowserUrl): Promise<EmulatedSession | Refusal> {
    const key = wanted.api_key as string;
    const existing = wanted.session ? this.#named.get(nameKey(key, wanted.session)) : undefined;
    if (existing) return existing;
    const { vaults, extensions } = this.options;
    const credentials =
      wanted.vault && wanted.vault_key ? vaults.openForSession(key, wanted.vault, wanted.vault_key) : [];
    if (isRefusal(credentials)) return credentials;
    const extensionDirs = wanted.extensions?.length ? extensions.dirs(key, wanted.extensions) : [];
    if (isRefusal(extensionDirs)) return extensionDirs;
    let session: EmulatedSession;
    try {
      session = await EmulatedSession.start(this.options.executable, wanted, (s) => this.#forget(s), {
        credentials,
        extensionDirs,
        now: this.options.now,
        pool: this.options.pool,
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return refusal(503, 'ERR::BROWSER::ALLOCATION_FAILED', `could not start a browser: ${message}`, {
        is_retryable: true,
        resource: 'SESSION',
      });
    }
    session.mcpEndpoint = this.options.mcpEndpoint?.(session);
    this.#byRunId.set(session.runId, session);
    if (wanted.session) this.#named.set(nameKey(key, wanted.session), session);
    this.options.recordings.begin(session, key, wanted.debug === true);
    return session;
  }

  async stop(): Promise<void> {
    await Promise.all(this.all().map((s) => s.end({ code: 1001, reason: 'the emulator is shutting down' })));
  }

  #forget(s: EmulatedSession): void {
    this.#byRunId.delete(s.runId);
    void this.options.recordings.end(s.runId);
    if (s.options.session && s.options.api_key) {
      const k = nameKey(s.options.api_key, s.options.session);
      if (this.#named.get(k) === s) this.#named.delete(k);
    }
  }
}

const nameKey = (key: string, name: string) => `${key}\u0000${name}`;
