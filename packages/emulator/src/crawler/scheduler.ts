/** The emulator's refresh scheduler: starts the refresh runs that are due, on its own clock. */
import type { EmulatedCrawl } from './crawl.js';

/**
 * Looks once a second for crawls whose next refresh is due and runs them. Its clock is the
 * emulator's, which tests move forward with {@link RefreshScheduler.advanceTime}.
 */
export class RefreshScheduler {
  private offset = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly crawls: ReadonlyMap<string, EmulatedCrawl>,
    private readonly baseNow: () => number,
  ) {
    this.timer = setInterval(() => void this.runDue(), 1000);
    this.timer.unref();
  }

  /** The emulator's clock, ms. */
  now = (): number => this.baseNow() + this.offset;

  /** Move the clock forward and run the refreshes that became due. */
  async advanceTime(ms: number): Promise<void> {
    this.offset += ms;
    await this.runDue();
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async runDue(): Promise<void> {
    const due = [...this.crawls.values()].filter(
      (c) => !c.running && c.nextRefreshAt !== null && c.nextRefreshAt <= this.now(),
    );
    await Promise.all(due.map((c) => c.refresh()));
  }
}
