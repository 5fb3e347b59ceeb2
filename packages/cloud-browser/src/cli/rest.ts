/**
 * The command's REST side (docs/decisions.md D20 to docs/decisions.md D24): `sessions`, `vault`, `extensions`, `recording`, `unblock`. A vault key
 * is read from `--key-file` (`-` for standard input) or `CLOUD_VAULT_KEY`, never from argv, and printed
 * only on create and rotate, with a warning to store it.
 */
import { createWriteStream } from 'node:fs';
import { readFile, rename, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { Option } from 'commander';
import type { VaultItemInput } from '../api/schema.js';
import { ConfigError } from '../errors.js';
import { redactUrl } from '../internal/redact.js';
import { print } from './output.js';
import { secretFrom } from './secrets.js';

type Run = <A extends unknown[]>(fn: (...args: A) => Promise<void>) => (...args: A) => Promise<void>;
type Common = { key?: string; browserUrl?: string; json?: boolean };

const VAULT_KEY_ENV = 'CLOUD_VAULT_KEY';

const common = (c: Command) =>
  c
    .option('--key <key>', 'the API key (default: CLOUD_API_KEY)')
    .option('--browser-url <url>', 'the cloud browser (default: CLOUD_BROWSER_URL)')
    .option('--json', 'print JSON for scripts');

/** The REST client, loaded when a command of these runs. */
const api = async (opts: Common) =>
  new (await import('../api/client.js')).CloudBrowserApi({ key: opts.key, browserUrl: opts.browserUrl });

/** The vault key: `--key-file <file>` (`-` for standard input), else `CLOUD_VAULT_KEY`. */
async function vaultKey(opts: { keyFile?: string }): Promise<string> {
  const key = await secretFrom('--key-file', opts.keyFile, VAULT_KEY_ENV);
  if (!key) {
    throw new ConfigError('vault key', [
      {
        option: '--key-file',
        message: `the vault key is needed: give --key-file <file> (- for standard input) or set ${VAULT_KEY_ENV}; never put it on the command line`,
      },
    ]);
  }
  return key;
}

/** Print a key shown once, with the warning on standard error. */
function printKey(what: Record<string, unknown>, key: string, json: boolean | undefined): void {
  process.stderr.write('warning: store this vault key now: it is shown once and cannot be recovered\n');
  print(json ? { ...what, key } : `${Object.values(what).join('\t')}\nkey\t${key}`, json === true);
}

/** Add the `sessions`, `vault`, `extensions`, `recording` and `unblock` commands. */
export function addRestCommands(program: Command, run: Run): void {
  addSessionCommands(program, run);
  addVaultItemCommands(addVaultCommands(program, run), run);
  addExtensionCommands(program, run);
  addRecordingCommand(program, run);
  addUnblockCommand(program, run);
}

/** `sessions ls` and `sessions stop`. */
function addSessionCommands(program: Command, run: Run): void {
  const sessions = program.command('sessions').description('Running cloud browser sessions');
  common(sessions.command('ls').description('List running sessions')).action(
    run(async (opts: Common) => {
      const list = await (await api(opts)).sessions.list();
      if (opts.json) return print(list, true);
      for (const s of list.sessions) process.stdout.write(`${s.run_id}\t${s.session ?? '-'}\t${s.started_at}\n`);
      process.stdout.write(`${list.total} running\n`);
    }),
  );
  common(sessions.command('stop <id-or-name>').description('Stop a session by run id or name')).action(
    run(async (id: string, opts: Common) => {
      const res = await (await api(opts)).sessions.stop(id);
      print(opts.json ? res : `stopped: ${id}`, opts.json === true);
    }),
  );
}

/** `vault create`, `ls`, `rotate` and `rm`; returns the `vault` command. */
function addVaultCommands(program: Command, run: Run): Command {
  const vault = program.command('vault').description('Credential vaults');
  common(
    vault.command('create <name>').description('Create a vault; prints its key once').option('--description <text>'),
  ).action(
    run(async (name: string, opts: Common & { description?: string }) => {
      const { vault: v, key } = await (await api(opts)).vaults.create({
        name,
        ...(opts.description ? { description: opts.description } : {}),
      });
      printKey({ id: v.id, name: v.name }, key, opts.json);
    }),
  );
  common(vault.command('ls').description('List vaults')).action(
    run(async (opts: Common) => {
      const { vaults } = await (await api(opts)).vaults.list();
      if (opts.json) return print(vaults, true);
      for (const v of vaults) process.stdout.write(`${v.id}\t${v.name}\t${v.item_count} items\n`);
    }),
  );
  common(
    vault
      .command('rotate <vault-id>')
      .description(`Rotate a vault's key; the current key from --key-file or ${VAULT_KEY_ENV}`)
      .option('--key-file <file>', 'a file holding the current vault key (- for standard input)'),
  ).action(
    run(async (id: string, opts: Common & { keyFile?: string }) => {
      const { key } = await (await api(opts)).vaults.rotate(id, await vaultKey(opts));
      printKey({ id }, key, opts.json);
    }),
  );
  common(vault.command('rm <vault-id>').description('Delete a vault and its items')).action(
    run(async (id: string, opts: Common) => {
      const res = await (await api(opts)).vaults.delete(id);
      print(opts.json ? res : `deleted: ${id}`, opts.json === true);
    }),
  );
  return vault;
}

/** `vault item add`, `ls` and `rm`. */
function addVaultItemCommands(vault: Command, run: Run): void {
  const item = vault.command('item').description('Items of a vault');
  common(
    item
      .command('add <vault-id>')
      .description('Add an item; its secret as JSON from --secret-file (a password: {"password": "…"})')
      .addOption(
        new Option('--type <type>', 'the kind')
          .choices(['password', 'passkey', 'cookie', 'totp'])
          .makeOptionMandatory(),
      )
      .requiredOption('--label <label>')
      .requiredOption('--origin <origin>', 'where it is used, such as https://shop.example')
      .option('--username <name>')
      .requiredOption('--secret-file <file>', 'a JSON file of the secret, typed by --type')
      .option('--key-file <file>', `a file holding the vault key (- for standard input; else ${VAULT_KEY_ENV})`),
  ).action(
    run(
      async (
        id: string,
        opts: Common & {
          type: string;
          label: string;
          origin: string;
          username?: string;
          secretFile: string;
          keyFile?: string;
        },
      ) => {
        let secret: unknown;
        try {
          secret = JSON.parse(await readFile(opts.secretFile, 'utf8'));
        } catch {
          throw new ConfigError('vault item', [
            { option: '--secret-file', message: `${opts.secretFile} must hold a JSON object` },
          ]);
        }
        const input = {
          type: opts.type,
          label: opts.label,
          origin: opts.origin,
          ...(opts.username ? { username: opts.username } : {}),
          secret,
        } as VaultItemInput;
        const res = await (await api(opts)).vaults.items.create(id, await vaultKey(opts), input);
        print(opts.json ? res.item : `added: ${res.item.id}`, opts.json === true);
      },
    ),
  );
  common(item.command('ls <vault-id>').description('List items (no secret)')).action(
    run(async (id: string, opts: Common) => {
      const items = await (await api(opts)).vaults.items.list(id);
      if (opts.json) return print(items, true);
      for (const i of items) process.stdout.write(`${i.id}\t${i.type}\t${i.label}\t${i.origin}\n`);
    }),
  );
  common(item.command('rm <vault-id> <item-id>').description('Delete an item')).action(
    run(async (id: string, itemId: string, opts: Common) => {
      const res = await (await api(opts)).vaults.items.delete(id, itemId);
      print(opts.json ? res : `deleted: ${itemId}`, opts.json === true);
    }),
  );
}

/** `extensions upload`, `ls` and `rm`. */
function addExtensionCommands(program: Command, run: Run): void {
  const extensions = program.command('extensions').description('Browser extensions sessions can run');
  common(extensions.command('upload <file>').description('Upload a .zip or .crx')).action(
    run(async (file: string, opts: Common) => {
      const res = await (await api(opts)).extensions.upload(await readFile(file), { filename: basename(file) });
      print(
        opts.json
          ? res
          : `${res.is_update ? 'updated' : 'uploaded'}: ${res.extension.id}\t${res.extension.name} ${res.extension.version}`,
        opts.json === true,
      );
    }),
  );
  common(extensions.command('ls').description('List extensions')).action(
    run(async (opts: Common) => {
      const res = await (await api(opts)).extensions.list();
      if (opts.json) return print(res, true);
      for (const e of res.extensions) process.stdout.write(`${e.id}\t${e.name}\t${e.version}\n`);
      process.stdout.write(`${res.quota.used} of ${res.quota.limit}\n`);
    }),
  );
  common(extensions.command('rm <id>').description('Delete an extension')).action(
    run(async (id: string, opts: Common) => {
      const res = await (await api(opts)).extensions.delete(id);
      print(opts.json ? res : `deleted: ${id}`, opts.json === true);
    }),
  );
}

/** `recording <run-id>`: the WebM of a debug session. */
function addRecordingCommand(program: Command, run: Run): void {
  common(
    program
      .command('recording <run-id>')
      .description('Download the recording of a debug session as WebM, waiting while it is finished')
      .option('--out <file>', 'where to write it (default: <run-id>.webm; - for standard output)')
      .option('--wait <seconds>', 'how long to wait for the recording, 0 to 3600 seconds', '180'),
  ).action(
    run(async (runId: string, opts: Common & { out?: string; wait: string }) => {
      const client = await api(opts);
      const wait = /^\d+$/.test(opts.wait) ? Number(opts.wait) * 1000 : Number.NaN;
      if (!(wait <= 3_600_000)) {
        throw new ConfigError('recording', [
          { option: '--wait', message: '`--wait` must be a whole number of seconds, from 0 to 3600' },
        ]);
      }
      const playback = await client.runs.waitForPlayback(runId, { timeout: wait });
      if (playback.status !== 'ready') {
        throw new ConfigError('recording', [
          {
            option: 'run-id',
            message:
              playback.status === 'disabled'
                ? `the session ${runId} was not opened with debug: true, so it was not recorded`
                : `the recording of ${runId} is ${playback.status}`,
          },
        ]);
      }
      const video = Readable.fromWeb((await client.runs.video(runId)) as import('node:stream/web').ReadableStream);
      const out = opts.out ?? `${runId}.webm`;
      if (out === '-') return void (await pipeline(video, process.stdout));
      // Written aside, then renamed: a failed download leaves no half file under the name.
      await pipeline(video, createWriteStream(`${out}.part`));
      await rename(`${out}.part`, out);
      const meta = playback.metadata;
      const summary = { file: out, bytes: (await stat(out)).size, ...meta };
      print(
        opts.json
          ? summary
          : `wrote ${out}: ${summary.bytes} bytes${meta ? `, ${meta.width}x${meta.height}, ${(meta.duration_ms / 1000).toFixed(1)} s` : ''}`,
        opts.json === true,
      );
    }),
  );
}

/** `unblock <url>`: a session already at the page. */
function addUnblockCommand(program: Command, run: Run): void {
  common(
    program
      .command('unblock <url>')
      .description('Open a session already at <url>; prints how to join it')
      .option('--timeout <seconds>', 'how long the browser lives, 1 to 1800 seconds')
      .option('--show-secrets', 'print ws_url with the key (it is a credential)'),
  ).action(
    run(async (url: string, opts: Common & { timeout?: string; showSecrets?: boolean }) => {
      const timeout =
        opts.timeout === undefined ? undefined : /^\d+$/.test(opts.timeout) ? Number(opts.timeout) : Number.NaN;
      const res = await (await api(opts)).unblock({
        url,
        ...(timeout === undefined ? {} : { browser_timeout: timeout }),
      });
      const wsUrl = opts.showSecrets ? res.ws_url : redactUrl(res.ws_url);
      print(
        opts.json ? { ...res, ws_url: wsUrl } : `run id:  ${res.run_id}\nsession: ${res.session_id}\nws_url:  ${wsUrl}`,
        opts.json === true,
      );
    }),
  );
}
