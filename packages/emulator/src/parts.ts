/**
 * The emulator is made of parts (sessions, the browser's REST side, the crawler, VNC, recordings,
 * the dashboard, the HTTP server), each stopped by the one place that started it: {@link Parts}
 * stops them in the reverse order of their start, so nothing still running uses a part already
 * gone (the server stops taking connections before the crawler and the sessions stop, sessions
 * before their pool, and the open connections are cut last, after each session closed its own).
 */

/** A part of the emulator: something started that must be stopped. */
export interface Part {
  /** For the error a failed stop is reported with. */
  readonly name: string;
  stop(): Promise<void> | void;
}

/** The emulator's parts, in the order they started. */
export class Parts {
  readonly #started: Part[] = [];
  #stopping: Promise<void> | undefined;

  /** Register a started part; returns it. */
  add<P extends Part>(part: P): P {
    this.#started.push(part);
    return part;
  }

  /** Register something started whose stop is `stop(thing)`; returns it. */
  adopt<T>(name: string, thing: T, stop: (thing: T) => Promise<unknown> | unknown): T {
    this.#started.push({ name, stop: async () => void (await stop(thing)) });
    return thing;
  }

  /**
   * Stop every part, the last started first, each after the one before it finished. A part whose
   * stop fails does not keep the others running; the first failure is thrown at the end. Once.
   */
  stopAll(): Promise<void> {
    this.#stopping ??= (async () => {
      const failures: unknown[] = [];
      for (const part of [...this.#started].reverse()) {
        try {
          await part.stop();
        } catch (error) {
          failures.push(new Error(`stopping the emulator's ${part.name} failed`, { cause: error }));
        }
      }
      if (failures.length > 0) throw failures[0];
    })();
    return this.#stopping;
  }
}
