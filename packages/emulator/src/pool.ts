/**
 * Browsers started ahead of the sessions that will use them: a session whose options need no
 * launch flag takes one already running, with a fresh profile no session has used, and a
 * replacement starts in the background. A browser leaves the pool once, for one session, and
 * is killed when that session ends: nothing of one session reaches another. The pool fills on
 * the first session that can use it.
 */
import { availableParallelism } from 'node:os';
import { type LaunchedChromium, launchChromium } from './chromium.js';

/** Half the machine's cores, from 1 to 4: a suite's next session is ready, the machine not crowded. */
export const DEFAULT_WARM_BROWSERS = Math.max(1, Math.min(4, Math.floor(availableParallelism() / 2)));

export class WarmPool {
  private readonly ready: LaunchedChromium[] = [];
  private readonly launching = new Set<Promise<LaunchedChromium | undefined>>();
  private closed = false;

  constructor(
    private readonly executable: string,
    private readonly size: number,
  ) {}

  /**
   * A running browser no session has used: one ready, else the one starting soonest (it is
   * further along than a launch begun now), else undefined. A replacement starts either way.
   */
  async take(): Promise<LaunchedChromium | undefined> {
    if (this.size === 0 || this.closed) return undefined;
    const ready = this.ready.shift();
    if (ready) {
      this.fill();
      return ready;
    }
    // The pool starts with the first session that can use it: an emulator used for crawls only
    // starts no browser.
    if (this.launching.size === 0) this.fill();
    const starting = this.launching.values().next().value;
    if (!starting) return undefined;
    this.launching.delete(starting);
    this.fill();
    return starting;
  }

  /** Kill every browser of the pool, those still starting too. */
  async close(): Promise<void> {
    this.closed = true;
    const starting = [...this.launching];
    this.launching.clear();
    await Promise.all([...this.ready.splice(0).map((b) => b.kill()), ...starting.map(async (p) => (await p)?.kill())]);
  }

  private fill(): void {
    while (!this.closed && this.ready.length + this.launching.size < this.size) {
      const launch: Promise<LaunchedChromium | undefined> = launchChromium(this.executable, []).then(
        (browser) => {
          if (!this.launching.delete(launch)) return browser; // Taken while starting: the taker has it.
          if (this.closed) {
            void browser.kill();
            return undefined;
          }
          this.ready.push(browser);
          // A pooled browser that dies is dropped; the next take starts another.
          void browser.exited.then(() => {
            const at = this.ready.indexOf(browser);
            if (at !== -1) this.ready.splice(at, 1);
          });
          return browser;
        },
        () => {
          // A launch that fails is not retried here (no loop on a broken browser): sessions
          // then start their own browser, and say why if that fails too.
          this.launching.delete(launch);
          return undefined;
        },
      );
      this.launching.add(launch);
    }
  }
}
