/**
 * The emulator's own sessions on a browser's targets: each page, and the out-of-process frames
 * under it (the control attaches to those through each page's auto-attach), so that a command
 * a client sent on its session for a target is carried out on the emulator's session for it.
 */
import type { CdpClient } from '../cdp.js';

interface Attached {
  session: string;
  targetId: string;
  type: string;
  /** The emulator's session it was attached under; undefined for a page. */
  parent: string | undefined;
}

/** Which of the emulator's sessions stands for which target. */
export class Targets {
  private readonly bySession = new Map<string, Attached>();
  private readonly byTarget = new Map<string, Attached>();

  constructor(control: CdpClient) {
    control.on('Target.attachedToTarget', (params, parent) => {
      const info = params.targetInfo as { targetId: string; type: string };
      const attached = { session: params.sessionId as string, targetId: info.targetId, type: info.type, parent };
      this.bySession.set(attached.session, attached);
      this.byTarget.set(attached.targetId, attached);
      if (info.type === 'iframe' || info.type === 'page') {
        // Out-of-process frames and workers under this one, attached as they appear and held until
        // the session's identity is on them (session.ts resumes them); its loads heard.
        void control
          .send(
            'Target.setAutoAttach',
            { autoAttach: true, waitForDebuggerOnStart: false, flatten: true },
            attached.session,
          )
          .catch(() => {});
        void control.send('Page.enable', {}, attached.session).catch(() => {});
      }
    });
    control.on('Target.detachedFromTarget', (params) => {
      const gone = this.bySession.get(params.sessionId as string);
      if (!gone) return;
      this.bySession.delete(gone.session);
      if (this.byTarget.get(gone.targetId) === gone) this.byTarget.delete(gone.targetId);
    });
  }

  /** The page target a session of the emulator belongs to (itself for a page). */
  pageOf(session: string): Attached | undefined {
    let at = this.bySession.get(session);
    while (at && at.type !== 'page') at = at.parent === undefined ? undefined : this.bySession.get(at.parent);
    return at;
  }

  /** The emulator's session on an out-of-process frame (its target id is its frame id). */
  frameSession(frameId: string): string | undefined {
    const attached = this.byTarget.get(frameId);
    return attached?.type === 'iframe' ? attached.session : undefined;
  }

  /** The out-of-process frames under a page, depth first. */
  framesUnder(page: string): Attached[] {
    const out: Attached[] = [];
    const walk = (parent: string) => {
      for (const a of this.bySession.values()) {
        if (a.parent === parent && a.type === 'iframe') {
          out.push(a);
          walk(a.session);
        }
      }
    };
    walk(page);
    return out;
  }

  /** The page a target of the browser belongs to (a page, or a frame under one): the emulator's session on it. */
  pageOfTarget(targetId: string): string | undefined {
    const attached = this.byTarget.get(targetId);
    return attached ? this.pageOf(attached.session)?.session : undefined;
  }

  /** What kind of target it is (`page`, `iframe`, `worker`…), when the emulator is attached to it. */
  typeOf(targetId: string): string | undefined {
    return this.byTarget.get(targetId)?.type;
  }

  /** The emulator's sessions on every page. */
  pages(): string[] {
    return [...this.bySession.values()].filter((a) => a.type === 'page').map((a) => a.session);
  }

  /** The emulator's session a frame's session was attached under. */
  parentOf(session: string): string | undefined {
    return this.bySession.get(session)?.parent;
  }

  /** The target id of one of the emulator's sessions. */
  targetOf(session: string): string | undefined {
    return this.bySession.get(session)?.targetId;
  }
}
