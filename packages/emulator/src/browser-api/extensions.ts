/**
 * Extensions (docs/decisions.md D22): a `.zip` or a `.crx` (its header stripped) unpacked with yauzl and checked:
 * a manifest (MV3 or MV2) with a name and a version; no path out of the folder, no symlink, no
 * archive inflating past 50 MiB. A session with `extensions=<id>` starts Chromium with them.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import { type Refusal, refusal } from '../http.js';

/** Largest total size an archive may inflate to. */
export const MAX_EXTENSION_BYTES = 50 << 20;
/** Extensions a key may keep. */
const QUOTA = 10;

interface StoredExtension {
  id: string;
  owner: string;
  name: string;
  version: string;
  manifest_version: number;
  source: string;
  created_at: string;
  dir: string;
}

const bad = (message: string) => refusal(400, 'ERR::BROWSER::INVALID_EXTENSION', message);

/** The zip inside a `.crx` (versions 2 and 3), or the bytes as they are. */
export function stripCrx(bytes: Buffer): Buffer | Refusal {
  if (bytes.subarray(0, 4).toString('latin1') !== 'Cr24') return bytes;
  const version = bytes.readUInt32LE(4);
  if (version === 3) return bytes.subarray(12 + bytes.readUInt32LE(8));
  if (version === 2) return bytes.subarray(16 + bytes.readUInt32LE(8) + bytes.readUInt32LE(12));
  return bad(`a CRX of version ${version} is not supported: send version 2 or 3, or the .zip`);
}

/** Unpack `zip` into `dir`, refusing what could escape it or fill the disk. */
async function unpack(zip: Buffer, dir: string): Promise<Refusal | undefined> {
  let archive: yauzl.ZipFile;
  try {
    archive = await new Promise((resolve, reject) =>
      yauzl.fromBuffer(zip, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true }, (e, z) =>
        e ? reject(e) : resolve(z),
      ),
    );
  } catch (e) {
    return bad(`the archive is not a zip: ${e instanceof Error ? e.message : e}`);
  }
  let total = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      archive.on('error', reject);
      archive.on('end', resolve);
      archive.on('entry', (entry: yauzl.Entry) => {
        void (async () => {
          // The upper 16 bits hold the Unix mode: 0o120000 is a symbolic link.
          if (((entry.externalFileAttributes >>> 16) & 0o170000) === 0o120000)
            throw new Error(`${entry.fileName} is a symbolic link`);
          if (entry.uncompressedSize > MAX_EXTENSION_BYTES) throw new Error('the archive inflates past 50 MiB');
          const target = join(dir, entry.fileName);
          if (!target.startsWith(`${dir}/`)) throw new Error(`${entry.fileName} leads out of the folder`);
          if (entry.fileName.endsWith('/')) {
            await mkdir(target, { recursive: true });
            return archive.readEntry();
          }
          await mkdir(dirname(target), { recursive: true });
          const stream = await new Promise<NodeJS.ReadableStream>((ok, ko) =>
            archive.openReadStream(entry, (e, s) => (e ? ko(e) : ok(s))),
          );
          const chunks: Buffer[] = [];
          await pipeline(
            stream,
            new Writable({
              write(chunk: Buffer, _enc, done) {
                total += chunk.length;
                if (total > MAX_EXTENSION_BYTES) return done(new Error('the archive inflates past 50 MiB'));
                chunks.push(chunk);
                done();
              },
            }),
          );
          await writeFile(target, Buffer.concat(chunks));
          archive.readEntry();
        })().catch(reject);
      });
      archive.readEntry();
    });
  } catch (e) {
    archive.close();
    // yauzl names an absolute or `..` path "invalid relative path".
    return bad(`the archive is refused: ${e instanceof Error ? e.message : e}`);
  }
  return undefined;
}

/** The checked fields of a manifest, or a refusal naming what is missing. */
function readManifest(text: string | undefined): { name: string; version: string; manifest_version: number } | Refusal {
  if (text === undefined) return bad('the archive has no manifest.json at its root');
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return bad('manifest.json is not JSON');
  }
  if (m.manifest_version !== 2 && m.manifest_version !== 3)
    return bad('manifest.json must say manifest_version 2 or 3');
  if (typeof m.name !== 'string' || !m.name) return bad('manifest.json needs a name');
  if (typeof m.version !== 'string' || !/^\d+(\.\d+){0,3}$/.test(m.version))
    return bad('manifest.json needs a version of one to four numbers (1.0.2)');
  return { name: m.name, version: m.version, manifest_version: m.manifest_version };
}

const shown = ({ owner: _o, dir: _d, ...e }: StoredExtension) => e;

/** The extensions of every key the emulator accepts, unpacked on disk. */
export class ExtensionStore {
  private readonly extensions = new Map<string, StoredExtension>();

  /** Unpack, check and keep an extension; one of the same name is replaced (`is_update`). */
  async add(owner: string, bytes: Buffer, filename: string, source: string): Promise<Refusal | object> {
    if (!/\.(zip|crx)$/i.test(filename)) return bad('the file must be a .zip or a .crx');
    const zip = stripCrx(bytes);
    if (!Buffer.isBuffer(zip)) return zip;
    const dir = await mkdtemp(join(tmpdir(), 'cloud-browser-ext-'));
    const failed = await unpack(zip, dir);
    const manifest = failed ?? readManifest(await readFile(join(dir, 'manifest.json'), 'utf8').catch(() => undefined));
    if ('code' in manifest) {
      await rm(dir, { recursive: true, force: true });
      return manifest;
    }
    const previous = [...this.extensions.values()].find((e) => e.owner === owner && e.name === manifest.name);
    if (!previous && this.list(owner).quota.used >= QUOTA) {
      await rm(dir, { recursive: true, force: true });
      return refusal(403, 'ERR::BROWSER::EXTENSION_QUOTA', `at most ${QUOTA} extensions: delete one first`);
    }
    if (previous) await this.delete(owner, previous.id);
    const stored: StoredExtension = {
      id: previous?.id ?? `ext_${randomUUID().replace(/-/g, '')}`,
      owner,
      ...manifest,
      source,
      created_at: new Date().toISOString(),
      dir,
    };
    this.extensions.set(stored.id, stored);
    return { extension: shown(stored), is_update: previous !== undefined };
  }

  /** Install from a URL: the emulator fetches from this machine only. */
  async fromUrl(owner: string, address: unknown): Promise<Refusal | object> {
    if (typeof address !== 'string' || !URL.canParse(address))
      return bad('`extension_url` must be the URL of a .crx or .zip');
    const url = new URL(address);
    if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(url.hostname))
      return bad('the emulator fetches extensions from this machine only (127.0.0.1)');
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
    if (!res?.ok) return bad(`the extension could not be fetched (${res?.status ?? 'no answer'})`);
    const bytes = Buffer.from(await res.arrayBuffer());
    const name = url.pathname.split('/').pop() || 'extension.crx';
    return this.add(owner, bytes, /\.(zip|crx)$/i.test(name) ? name : `${name}.crx`, url.href);
  }

  list(owner: string) {
    const mine = [...this.extensions.values()].filter((e) => e.owner === owner);
    return { extensions: mine.map(shown), quota: { used: mine.length, limit: QUOTA } };
  }

  get(owner: string, id: string): Refusal | object {
    const e = this.extensions.get(id);
    return e && e.owner === owner
      ? { extension: shown(e) }
      : refusal(404, 'ERR::BROWSER::EXTENSION_NOT_FOUND', `no extension ${id}`);
  }

  async delete(owner: string, id: string): Promise<Refusal | object> {
    const e = this.extensions.get(id);
    if (!e || e.owner !== owner) return refusal(404, 'ERR::BROWSER::EXTENSION_NOT_FOUND', `no extension ${id}`);
    this.extensions.delete(id);
    await rm(e.dir, { recursive: true, force: true });
    return { success: true, message: 'extension deleted' };
  }

  /** The unpacked folders of `ids` for a session, or a refusal naming the unknown one. */
  dirs(owner: string, ids: readonly string[]): string[] | Refusal {
    const out: string[] = [];
    for (const id of ids) {
      const e = this.extensions.get(id);
      if (!e || e.owner !== owner)
        return refusal(400, 'ERR::BROWSER::EXTENSION_NOT_FOUND', `no extension ${id}: upload it first`);
      out.push(e.dir);
    }
    return out;
  }

  /** Remove every unpacked folder. */
  async close(): Promise<void> {
    await Promise.all([...this.extensions.values()].map((e) => rm(e.dir, { recursive: true, force: true })));
    this.extensions.clear();
  }
}
