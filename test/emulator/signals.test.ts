/**
 * A process running the emulator leaves no browser and no profile folder behind, however it
 * ends: Ctrl-C (SIGINT), SIGTERM, SIGHUP, a handler of its own, or SIGKILL (its browsers read
 * the end of their DevTools pipe and quit; the next emulator removes the folders). Every process
 * of each browser (not only the first) is looked for in /proc by its profile path.
 */
import { once } from 'node:events';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { buildBrowserUrl } from '../../packages/cloud-browser/src/index.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { eventually } from '../support/drivers.js';
import { type Running, startUntil } from '../support/process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const running: Running[] = [];

async function emulatorChild(env: NodeJS.ProcessEnv = {}): Promise<Running> {
  const child = await startUntil(['--import', 'tsx', 'test/fixtures/emulator-child.ts'], /ready/, {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  running.push(child);
  return child;
}

/** The profile folders of the emulator in process `pid`. */
const foldersOf = (pid: number) =>
  readdirSync(tmpdir()).filter((name) => name.startsWith(`cloud-browser-emulator-${pid}-`));

/** The processes whose command line names a profile folder of the emulator in process `pid`. */
function browsersOf(pid: number): number[] {
  return [...processesByProfile(pid).values()].flat();
}

/**
 * The emulator's profile folders that some process names, each with those processes. How many
 * processes one browser starts depends on the build (Debian's Chromium starts zygotes and
 * utilities; a build for serverless runs fewer): a browser is counted by its profile, not by them.
 */
function processesByProfile(pid: number): Map<string, number[]> {
  const marker = join(tmpdir(), `cloud-browser-emulator-${pid}-`);
  const found = new Map<string, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'latin1');
      const at = cmdline.indexOf(marker);
      if (at === -1) continue;
      const profile = /^[^\0]*?cloud-browser-emulator-\d+-[^\0/]+/.exec(cmdline.slice(at))?.[0] ?? marker;
      found.set(profile, [...(found.get(profile) ?? []), Number(entry)]);
    } catch {} // Gone while we looked.
  }
  return found;
}

const exitOf = (r: Running) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (r.child.exitCode !== null || r.child.signalCode !== null) {
      resolve({ code: r.child.exitCode, signal: r.child.signalCode });
    } else r.child.once('exit', (code, signal) => resolve({ code, signal }));
  });

afterEach(() => {
  for (const r of running.splice(0)) r.child.kill('SIGKILL');
});

describe.skipIf(process.platform !== 'linux')('a process running the emulator, when it ends', () => {
  it.each(['SIGINT', 'SIGTERM', 'SIGHUP'] as const)(
    'on %s: ends as the signal would, every browser process gone, every profile folder removed',
    async (signal) => {
      const child = await emulatorChild();
      const pid = child.child.pid ?? 0;
      // Two sessions: a browser each, running with its own profile.
      expect(processesByProfile(pid).size).toBeGreaterThanOrEqual(2);
      // Two sessions' profiles, and the warm pool's.
      expect(foldersOf(pid).length).toBeGreaterThanOrEqual(2);
      const exited = exitOf(child);
      child.child.kill(signal);
      expect(await exited).toEqual({ code: null, signal });
      expect(
        await eventually(
          () => browsersOf(pid),
          (p) => p.length === 0,
        ),
      ).toEqual([]);
      expect(foldersOf(pid)).toEqual([]);
    },
    60_000,
  );

  it('with a SIGTERM handler of its own: its handler runs, and still no browser is left', async () => {
    const child = await emulatorChild({ HANDLER: '1' });
    const pid = child.child.pid ?? 0;
    const exited = exitOf(child);
    child.child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(child.output()).toContain('closed by my own handler');
    expect(browsersOf(pid)).toEqual([]);
    expect(foldersOf(pid)).toEqual([]);
  }, 60_000);

  it('on SIGKILL: its browsers end by themselves, and the next emulator removes the folders', async () => {
    const first = await emulatorChild();
    const pid = first.child.pid ?? 0;
    expect(processesByProfile(pid).size).toBeGreaterThanOrEqual(2);
    const exited = exitOf(first);
    first.child.kill('SIGKILL');
    await exited;
    // Nobody killed them: each browser read the end of its DevTools pipe.
    expect(
      await eventually(
        () => browsersOf(pid),
        (p) => p.length === 0,
        20_000,
      ),
    ).toEqual([]);
    expect(foldersOf(pid).length).toBeGreaterThanOrEqual(2); // two sessions and the warm pool
    const next = await emulatorChild();
    expect(foldersOf(pid)).toEqual([]);
    await next.stop();
  }, 90_000);
});

describe.skipIf(process.platform !== 'linux')("the emulator's browsers have no side door", () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(() => emulator.close());

  /** The socket inodes of TCP sockets listening on this machine. */
  function listeningInodes(): Set<string> {
    const inodes = new Set<string>();
    for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        continue;
      }
      for (const line of text.split('\n').slice(1)) {
        const cols = line.trim().split(/\s+/);
        if (cols[3] === '0A' && cols[9]) inodes.add(cols[9]); // 0A: LISTEN
      }
    }
    return inodes;
  }

  /** The inodes of the sockets process `pid` holds. */
  function socketsOf(pid: number): string[] {
    try {
      return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
        try {
          return [/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? []].flat();
        } catch {
          return [];
        }
      });
    } catch {
      return [];
    }
  }

  const call = (ws: WebSocket, message: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const onMessage = (data: Buffer) => {
        const answer = JSON.parse(data.toString()) as Record<string, unknown>;
        if (answer.id !== message.id) return;
        ws.off('message', onMessage);
        resolve(answer);
      };
      ws.on('message', onMessage);
      ws.send(JSON.stringify(message));
    });

  it('no process of a session listens on any TCP port (DevTools is a pipe only the emulator holds)', async () => {
    const url = buildBrowserUrl({ browser_url: emulator.browserUrl, api_key: emulator.apiKey }).href;
    const ws = new WebSocket(url);
    await once(ws, 'open');
    const session = await eventually(
      () => emulator.sessions()[0],
      (s) => s !== undefined,
    );
    const pid = session?.pid ?? 0;
    const profile = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
    expect(profile).toContain('--remote-debugging-pipe');
    expect(profile.some((arg) => arg.startsWith('--remote-debugging-port'))).toBe(false);
    const browsers = browsersOf(process.pid);
    expect(browsers.length).toBeGreaterThanOrEqual(2);
    const listening = listeningInodes();
    expect(listening.size).toBeGreaterThan(0); // The emulator's own server, at least.
    for (const p of browsers) expect(socketsOf(p).filter((inode) => listening.has(inode))).toEqual([]);
    ws.close();
  }, 60_000);

  it("one client of a shared session cannot drive another client's page sessions", async () => {
    const url = buildBrowserUrl({
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      session: 'shared',
      auto_close: false,
    }).href;
    const a = new WebSocket(url);
    await once(a, 'open');
    const b = new WebSocket(url);
    await once(b, 'open');
    const { result: targets } = (await call(a, { id: 1, method: 'Target.getTargets' })) as {
      result: { targetInfos: { targetId: string; type: string }[] };
    };
    const page = targets.targetInfos.find((t) => t.type === 'page');
    const attached = (await call(a, {
      id: 2,
      method: 'Target.attachToTarget',
      params: { targetId: page?.targetId, flatten: true },
    })) as { result: { sessionId: string } };
    const sessionId = attached.result.sessionId;
    const evaluate = { method: 'Runtime.evaluate', params: { expression: '6 * 7', returnByValue: true }, sessionId };
    expect(await call(a, { id: 3, ...evaluate })).toMatchObject({
      id: 3,
      result: { result: { value: 42 } },
      sessionId,
    });
    expect(await call(b, { id: 3, ...evaluate })).toEqual({
      id: 3,
      error: { code: -32001, message: 'Session with given id not found.' },
    });
    // Each client numbers its own calls: the same id on both sides is answered to each.
    const [va, vb] = await Promise.all([
      call(a, { id: 9, method: 'Browser.getVersion' }),
      call(b, { id: 9, method: 'Browser.getVersion' }),
    ]);
    expect([va.id, vb.id, typeof (va.result as { product: string }).product]).toEqual([9, 9, 'string']);
    a.close();
    b.close();
  }, 60_000);
});
