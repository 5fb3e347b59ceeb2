/**
 * The session's downloads (`ScrapiumBrowser`, docs/wire.md §10): every file the browser downloads
 * goes to a folder of the session's own on the emulator's side, whatever folder a client asked
 * for (docs/decisions.md D26); finished files are named as the page suggested (`name (1).ext`
 * for a second of the same name); a file over 100 MB is cancelled and the session goes on; the
 * folder goes with the session.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { MAX_DOWNLOAD_BYTES } from 'cloud-browser';
import type { CdpClient } from '../cdp.js';

/** A name the folder can hold: no separators, no leading dots. */
function safeName(name: string): string {
  const cleaned = name
    .replace(/[/\\\0]/g, '_')
    .replace(/^\.+/, '')
    .trim();
  return cleaned.length > 0 ? cleaned.slice(0, 200) : 'download';
}

/** One session's downloads folder and what is in it. */
export class Downloads {
  readonly dir = mkdtempSync(join(tmpdir(), 'cloud-browser-downloads-'));
  /** Downloads under way: their suggested names. */
  private readonly started = new Map<string, string>();
  /** Files over the limit, cancelled, by suggested name: why. */
  readonly refused = new Map<string, string>();
  private settling: Promise<void> = Promise.resolve();
  /** Files on disk still under their download id: not listed until renamed (or gone). */
  private readonly unnamed = new Set<string>();

  constructor(
    private readonly control: CdpClient,
    private readonly limit = MAX_DOWNLOAD_BYTES,
  ) {
    control.on('Browser.downloadWillBegin', (p) => {
      this.started.set(p.guid as string, safeName(p.suggestedFilename as string));
      this.unnamed.add(p.guid as string);
    });
    control.on('Browser.downloadProgress', (p) => this.progress(p));
  }

  /** Send every download of the browser to the session's folder, with events for the emulator. */
  async start(): Promise<void> {
    await this.control.send('Browser.setDownloadBehavior', {
      behavior: 'allowAndName',
      downloadPath: this.dir,
      eventsEnabled: true,
    });
  }

  /** A client's download behaviour, made the session's: its folder replaced by the session's own. */
  rewrite(params: Record<string, unknown>): void {
    if (params.behavior === 'allow' || params.behavior === 'allowAndName' || params.downloadPath !== undefined) {
      params.downloadPath = this.dir;
      params.behavior = params.behavior === 'deny' || params.behavior === 'default' ? params.behavior : 'allowAndName';
      params.eventsEnabled = true;
    }
  }

  private progress(p: Record<string, unknown>): void {
    const guid = p.guid as string;
    const total = Number(p.totalBytes ?? 0);
    const received = Number(p.receivedBytes ?? 0);
    const name = this.started.get(guid);
    if (p.state === 'inProgress' && (total > this.limit || received > this.limit)) {
      this.started.delete(guid);
      if (name) this.refused.set(name, `the file is over ${this.limit / 1024 / 1024} MB, the most a download may be`);
      void this.control.send('Browser.cancelDownload', { guid }).catch(() => {});
      return;
    }
    if (p.state === 'completed' && name !== undefined) {
      this.started.delete(guid);
      this.settling = this.settling.then(() => this.settle(guid, name)).catch(() => {});
    } else if (p.state === 'canceled') {
      this.started.delete(guid);
      this.unnamed.delete(guid);
    }
  }

  /** A finished file, renamed from its id to the name the page suggested. */
  private async settle(guid: string, suggested: string): Promise<void> {
    const taken = new Set(await readdir(this.dir));
    const ext = extname(suggested);
    const stem = suggested.slice(0, suggested.length - ext.length);
    let name = suggested;
    for (let n = 1; taken.has(name); n++) name = `${stem} (${n})${ext}`;
    await rename(join(this.dir, guid), join(this.dir, name)).finally(() => this.unnamed.delete(guid));
  }

  /** Finished files and their sizes. */
  async metadata(): Promise<Record<string, number>> {
    await this.settling;
    const out: Record<string, number> = {};
    for (const name of await readdir(this.dir)) {
      if (this.started.has(name) || this.unnamed.has(name) || name.endsWith('.crdownload')) continue;
      const s = await stat(join(this.dir, name)).catch(() => undefined);
      if (s?.isFile() && s.size <= this.limit) out[name] = s.size;
    }
    return out;
  }

  /** One finished file's bytes, base64; undefined when there is none of that name. */
  async read(filename: string): Promise<string | undefined> {
    const names = await this.metadata();
    if (!Object.hasOwn(names, filename)) return undefined;
    return (await readFile(join(this.dir, filename))).toString('base64');
  }

  /** Every finished file, base64, removed afterwards with `remove`. */
  async readAll(remove: boolean): Promise<Record<string, string>> {
    const files: Record<string, string> = {};
    for (const name of Object.keys(await this.metadata())) {
      files[name] = (await readFile(join(this.dir, name))).toString('base64');
      if (remove) await rm(join(this.dir, name), { force: true });
    }
    return files;
  }

  /** The folder goes with the session. */
  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
