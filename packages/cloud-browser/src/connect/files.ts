/**
 * Files across the wire (docs/decisions.md D26): the cloud browser runs on another machine, so
 * it can neither write into a folder on the user's machine nor read a path there. Between the
 * library and the socket, this carries them:
 *
 * - **Downloads.** A library that sets a download folder (`Browser.setDownloadBehavior`, as
 *   Playwright does for its artifacts and a Puppeteer user does for theirs) gets each finished
 *   file written there before it hears that the download completed: read back through the
 *   service's downloads domain (`ScrapiumBrowser`, docs/wire.md §10), named as the library
 *   expects (the download's id for `allowAndName`, the page's name for `allow`). Progress events
 *   pass as they come; a file the browser could not keep (over 100 MB) is a failed download,
 *   and the reason is logged.
 * - **Uploads.** `DOM.setFileInputFiles` with local paths (Puppeteer's `uploadFile`) is sent as
 *   the files' contents instead, set on the input in the page as a person choosing them would
 *   (`input` and `change`), 50 MB in all at most, as Playwright does for a browser not on its
 *   machine.
 */
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import type { Log } from '../internal/log.js';
import { MAX_DOWNLOAD_BYTES } from '../service/domains.js';
import { type CloudSocket, RESERVED_CDP_ID } from './socket.js';

/** The most a set of files to upload may weigh in all: the service's, and Playwright's, limit. */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code?: number; message?: string };
  sessionId?: string;
}

interface Folder {
  path: string;
  /** `allowAndName` names files by the download's id; `allow` by the page's name. */
  byId: boolean;
}

const MIME: Record<string, string> = {
  '.txt': 'text/plain',
  '.html': 'text/html',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.zip': 'application/zip',
  '.xml': 'application/xml',
};

// In the page, on the file input: the files made from their bytes, set as a person's choice.
const SET_FILES = `async function (files) {
  if (!(this instanceof HTMLInputElement) || this.type !== 'file') throw new Error('Node is not a file input element');
  const transfer = new DataTransfer();
  for (const f of files) {
    let bytes;
    try { bytes = await (await fetch('data:application/octet-stream;base64,' + f.data)).arrayBuffer(); }
    catch { bytes = Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0)); }
    transfer.items.add(new File([bytes], f.name, { type: f.mimeType, lastModified: f.lastModified }));
  }
  this.files = transfer.files;
  this.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
}`;

const ID_HEAD = `{"id":${String(RESERVED_CDP_ID).slice(0, 7)}`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Carries downloads and uploads between a library on this machine and the remote browser. */
export class FileTransfer {
  private nextId = RESERVED_CDP_ID + 1;
  private readonly pending = new Map<number, (m: Message) => void>();
  private readonly folders = new Map<string, Folder>();
  private readonly names = new Map<string, string>();
  private readonly fetching = new Map<string, Promise<boolean>>();
  /** Remote files already carried over, so a second file of the same name is told apart. */
  private readonly claimed = new Set<string>();

  constructor(
    private readonly socket: CloudSocket,
    private readonly log: Log,
  ) {
    socket.outgoing = (data) => this.fromLibrary(data);
    socket.incoming = (data) => this.fromBrowser(data);
  }

  /** A command of our own on the browser's session. */
  private call(
    method: string,
    params: Record<string, unknown> = {},
    sessionId?: string,
  ): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (m) =>
        m.error ? reject(new Error(m.error.message ?? `${method} failed`)) : resolve(m.result ?? {}),
      );
      this.socket.sendRaw(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
      void this.socket.closed.then(() => {
        if (this.pending.delete(id)) reject(new Error('the session closed'));
      });
    });
  }

  private fromLibrary(data: Buffer | string): boolean {
    // Every command the library sends passes here: only those two are decoded and parsed.
    if (data.length > 1_000_000) return false;
    if (!data.includes('etDownloadBehavior"') && !data.includes('"DOM.setFileInputFiles"')) return false;
    const text = typeof data === 'string' ? data : data.toString('utf8');
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch {
      return false;
    }
    if (message.method === 'Browser.setDownloadBehavior' || message.method === 'Page.setDownloadBehavior') {
      if (!this.folderFrom(message)) return false;
      // The connector must hear each download end to carry the file over.
      if (message.method === 'Browser.setDownloadBehavior') message.params = { ...message.params, eventsEnabled: true };
      this.socket.sendRaw(JSON.stringify(message));
      return true;
    }
    if (
      message.method === 'DOM.setFileInputFiles' &&
      Array.isArray(message.params?.files) &&
      message.params.files.length > 0
    ) {
      void this.upload(message);
      return true;
    }
    return false;
  }

  /** Where the library wants the downloads of a context (true), or that it wants none there. */
  private folderFrom(message: Message): boolean {
    const p = message.params ?? {};
    const key = typeof p.browserContextId === 'string' ? p.browserContextId : '';
    if ((p.behavior === 'allow' || p.behavior === 'allowAndName') && typeof p.downloadPath === 'string') {
      this.folders.set(key, { path: p.downloadPath, byId: p.behavior === 'allowAndName' });
      return true;
    }
    this.folders.delete(key);
    return false;
  }

  private fromBrowser(data: Buffer): boolean {
    const head = data.subarray(0, 40).toString('latin1');
    if (head.startsWith(ID_HEAD)) {
      const message = JSON.parse(data.toString('utf8')) as Message;
      const done = message.id === undefined ? undefined : this.pending.get(message.id);
      if (!done) return false;
      this.pending.delete(message.id as number);
      done(message);
      return true;
    }
    if (!head.startsWith('{"method":"Browser.download') && !head.startsWith('{"method":"Page.download')) return false;
    const message = JSON.parse(data.toString('utf8')) as Message;
    const p = message.params ?? {};
    const guid = String(p.guid ?? '');
    if (message.method?.endsWith('downloadWillBegin')) {
      this.names.set(guid, String(p.suggestedFilename ?? 'download'));
      return false;
    }
    if (p.state === 'canceled' && Number(p.totalBytes) > MAX_DOWNLOAD_BYTES) {
      this.log(
        'warn',
        `download ${this.names.get(guid) ?? guid} failed: ${mb(Number(p.totalBytes))} is over the 100 MB a download may be`,
      );
    }
    if (p.state !== 'completed' || this.folders.size === 0) return false;
    let fetching = this.fetching.get(guid);
    if (!fetching) {
      fetching = this.carry(guid, Number(p.totalBytes ?? p.receivedBytes ?? 0));
      this.fetching.set(guid, fetching);
    }
    void fetching.then((ok) => {
      const event = ok ? data : Buffer.from(JSON.stringify({ ...message, params: { ...p, state: 'canceled' } }));
      this.socket.deliver(event);
    });
    return true;
  }

  /** Read a finished file back from the browser and write it where the library looks; false when it could not. */
  private async carry(guid: string, size: number): Promise<boolean> {
    const suggested = this.names.get(guid) ?? 'download';
    const folder = this.folders.get('') ?? [...this.folders.values()].at(-1);
    if (!folder) return true;
    try {
      const remote = await this.remoteName(suggested, size);
      const { data } = await this.call('ScrapiumBrowser.getDownload', { filename: remote });
      this.claimed.add(remote);
      await mkdir(folder.path, { recursive: true });
      const local = folder.byId ? guid : await freeName(folder.path, basename(suggested));
      // Written beside, then renamed: a watcher of the folder never sees half a file.
      const part = join(folder.path, `.${local}.${guid}.part`);
      await writeFile(part, Buffer.from(String(data), 'base64'));
      await rename(part, join(folder.path, local));
      this.log('debug', `download ${suggested} (${mb(size)}) carried to ${join(folder.path, local)}`);
      return true;
    } catch (error) {
      this.log('warn', `download ${suggested} failed: ${(error as Error).message}`);
      return false;
    }
  }

  /** The browser's name for a finished file: the page's name, or `name (n).ext` for a second of it, not yet carried. */
  private async remoteName(suggested: string, size: number): Promise<string> {
    const ext = extname(suggested);
    const stem = suggested.slice(0, suggested.length - ext.length);
    const same = (name: string) => name === suggested || (name.startsWith(`${stem} (`) && name.endsWith(`)${ext}`));
    for (let attempt = 0; attempt < 50; attempt++) {
      const { metadata } = (await this.call('ScrapiumBrowser.getDownloadsMetadatas')) as {
        metadata: Record<string, number>;
      };
      const found = Object.entries(metadata).find(
        ([name, bytes]) => same(name) && !this.claimed.has(name) && (size === 0 || bytes === size),
      );
      if (found) return found[0];
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the browser did not keep ${suggested}`);
  }

  /** Set the files on the input from their contents; answer the library's command as the browser would. */
  private async upload(message: Message): Promise<void> {
    const p = message.params ?? {};
    const session = message.sessionId;
    const answer = (body: Pick<Message, 'result' | 'error'>) =>
      this.socket.deliver(
        Buffer.from(JSON.stringify({ id: message.id, ...body, ...(session ? { sessionId: session } : {}) })),
      );
    try {
      const paths = (p.files as unknown[]).map((f) => resolve(String(f)));
      const sizes = await Promise.all(paths.map(async (path) => (await stat(path)).size));
      const total = sizes.reduce((a, b) => a + b, 0);
      if (total > MAX_UPLOAD_BYTES) {
        throw new Error(
          `the files to upload weigh ${mb(total)} in all, over the ${mb(MAX_UPLOAD_BYTES)} a remote browser takes: upload fewer or smaller files`,
        );
      }
      const files = await Promise.all(
        paths.map(async (path) => ({
          name: basename(path),
          mimeType: MIME[extname(path).toLowerCase()] ?? 'application/octet-stream',
          lastModified: Math.round((await stat(path)).mtimeMs),
          data: (await readFile(path)).toString('base64'),
        })),
      );
      let objectId = typeof p.objectId === 'string' ? p.objectId : undefined;
      if (!objectId) {
        const node = p.backendNodeId !== undefined ? { backendNodeId: p.backendNodeId } : { nodeId: p.nodeId };
        const resolved = (await this.call('DOM.resolveNode', node, session)) as { object?: { objectId?: string } };
        objectId = resolved.object?.objectId;
      }
      const set = (await this.call(
        'Runtime.callFunctionOn',
        { objectId, functionDeclaration: SET_FILES, arguments: [{ value: files }], awaitPromise: true },
        session,
      )) as { exceptionDetails?: { exception?: { description?: string } } };
      if (set.exceptionDetails)
        throw new Error(set.exceptionDetails.exception?.description?.split('\n')[0] ?? 'the page refused the files');
      answer({ result: {} });
    } catch (error) {
      const text =
        (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? `no file at ${(error as NodeJS.ErrnoException).path}`
          : (error as Error).message;
      answer({ error: { code: -32000, message: `cloud-browser could not upload: ${text}` } });
    }
  }
}

/** A name not yet taken in `dir`, as Chromium would pick it: `name (1).ext` after `name.ext`. */
async function freeName(dir: string, name: string): Promise<string> {
  const ext = extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 0; ; n++) {
    const candidate = n === 0 ? name : `${stem} (${n})${ext}`;
    const taken = await stat(join(dir, candidate)).then(
      () => true,
      () => false,
    );
    if (!taken) return candidate;
  }
}
