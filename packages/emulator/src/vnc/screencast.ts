/** One session's picture for its viewers: Chromium's screencast of the newest page. */
import type { CdpClient } from '../cdp.js';
import type { CdpInput } from './input.js';
import { type Frame, toFrame } from './tight.js';

/** The pages of a session, newest last, as the control connection sees them. */
export interface PageSessions {
  /** CDP session ids of open pages, oldest first. */
  readonly ids: string[];
  /** Call `listener` whenever a page opens or closes. */
  onChange(listener: () => void): () => void;
}

/**
 * One session's screencast, shared by its viewers: it follows the newest page, starts with the
 * first viewer and stops with the last.
 */
export class Screencast {
  private readonly viewers = new Set<(frame: Frame) => void>();
  private page: string | undefined;
  private stopWatching: (() => void) | undefined;
  latest: Frame | undefined;

  constructor(
    private readonly control: CdpClient,
    private readonly pages: PageSessions,
  ) {
    control.on('Page.screencastFrame', (params, sessionId) => {
      if (sessionId !== this.page) return;
      void control.send('Page.screencastFrameAck', { sessionId: params.sessionId }, sessionId).catch(() => {});
      const frame = toFrame(
        params.data as string,
        (params.metadata as { deviceWidth?: number } | undefined)?.deviceWidth,
      );
      if (!frame) return;
      this.latest = frame;
      for (const viewer of this.viewers) viewer(frame);
    });
  }

  /** Send an input event to the page on view. */
  input({ method, params }: CdpInput): void {
    if (this.page) void this.control.send(method, params, this.page).catch(() => {});
  }

  /** Add a viewer; the first one gets a picture at once (a screenshot) before the screencast's. */
  async join(viewer: (frame: Frame) => void): Promise<Frame | undefined> {
    this.viewers.add(viewer);
    if (this.viewers.size === 1) {
      this.stopWatching = this.pages.onChange(() => void this.follow());
      await this.follow();
    }
    if (!this.latest && this.page) {
      const shot = await this.control
        .send<{ data: string }>('Page.captureScreenshot', { format: 'jpeg', quality: 80 }, this.page)
        .catch(() => undefined);
      this.latest = shot ? toFrame(shot.data) : undefined;
    }
    return this.latest;
  }

  leave(viewer: (frame: Frame) => void): void {
    this.viewers.delete(viewer);
    if (this.viewers.size > 0) return;
    this.stopWatching?.();
    if (this.page) void this.control.send('Page.stopScreencast', {}, this.page).catch(() => {});
    this.page = undefined;
    this.latest = undefined;
  }

  /** Point the screencast at the newest page. */
  private async follow(): Promise<void> {
    const newest = this.pages.ids.at(-1);
    if (newest === this.page) return;
    if (this.page && this.pages.ids.includes(this.page)) {
      await this.control.send('Page.stopScreencast', {}, this.page).catch(() => {});
    }
    this.page = newest;
    this.latest = undefined;
    if (!newest) return;
    await this.control
      .send('Page.startScreencast', { format: 'jpeg', quality: 80, everyNthFrame: 1 }, newest)
      .catch(() => {});
  }
}
