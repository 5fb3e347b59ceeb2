import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { connectPlaywright } from '../../packages/cloud-browser/src/connect/playwright.js';
import { signDelivery } from '../../packages/cloud-browser/src/webhooks/index.js';
import { type CrawlSite, startCrawlSite } from '../support/crawl-site.js';
import { crawlBody } from '../support/deliveries.js';
import { startUntil } from '../support/process.js';

// The built command (npm test builds first), run as a child process as a person would.
const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'packages', 'cloud-browser', 'dist', 'cli.js');
const KEY = 'cli-test-key-3b8f0c1d';
const writeConfig = (config: object) => {
  const file = join(mkdtempSync(join(tmpdir(), 'cli-config-')), 'crawl.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
};
const baseEnv = () => {
  const env = { ...process.env };
  for (const k of ['CLOUD_API_KEY', 'CLOUD_API_URL', 'CLOUD_BROWSER_URL']) delete env[k];
  return env;
};

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function cli(args: string[], env: NodeJS.ProcessEnv = baseEnv()): Promise<Result> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], { env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** Run the command with `input` on its standard input. */
function cliWithInput(args: string[], input: string, env: NodeJS.ProcessEnv): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** A minimal extension, zipped. */
async function extensionZip(): Promise<Buffer> {
  const z = new yazl.ZipFile();
  z.addBuffer(Buffer.from(JSON.stringify({ manifest_version: 3, name: 'CliTool', version: '1.2' })), 'manifest.json');
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Start a long-running command and wait for a line matching `ready`. */
const start = (args: string[], ready: RegExp, env: NodeJS.ProcessEnv = baseEnv()) =>
  startUntil([bin, ...args], ready, { env });

describe('cloud-browser url', () => {
  it('prints the validated URL with its secrets redacted', async () => {
    const r = await cli([
      'url',
      '--browser-url',
      'wss://b.test',
      '--key',
      KEY,
      '--languages',
      'en-US,fr',
      '--timeout',
      '600',
      '--vnc',
      '--vnc-password',
      'vnc-pw-123',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(
      'wss://b.test/?languages=en-US%2Cfr&timeout=600&enable_vnc=true&vnc_password=***&api_key=***',
    );
  });

  it('prints the secrets when asked', async () => {
    const r = await cli(['url', '--browser-url', 'wss://b.test', '--key', KEY, '--show-secrets']);
    expect(r.stdout.trim()).toBe(`wss://b.test/?api_key=${KEY}`);
  });

  it('refuses invalid options with one line per problem, exit 2, and no secret', async () => {
    const r = await cli([
      'url',
      '--browser-url',
      'wss://b.test',
      '--key',
      KEY,
      '--timeout',
      '3600',
      '--vault-key',
      'not-base64-secret',
      '--vault',
      'v1',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toMatch(
      /^error ConfigError: Invalid browser session options: 2 problems \(fix the flags/,
    );
    // Named by their flags, not by the options behind them.
    expect(r.stderr).toContain('`--timeout` must be at most 1800 seconds (got 3600)');
    expect(r.stderr).toContain('`--vault-key` must be the standard base64');
    expect(r.stderr + r.stdout).not.toContain(KEY);
    expect(r.stderr + r.stdout).not.toContain('not-base64-secret');
  });

  it('shows help with an example, units, ranges and choices', async () => {
    const r = await cli(['url', '--help']);
    expect(r.stdout).toContain('--proxy-pool <value>');
    expect(r.stdout).toContain('Example:');
    expect(r.stdout).toMatch(/--timeout <n>\s+seconds before the session ends, 1 to 1800/);
    expect(r.stdout).toMatch(/--proxy-pool <value>\s+the proxy pool: datacenter or residential/);
    expect(r.stdout).toMatch(/--languages <a,b>\s+Accept-Language tags, comma-separated, at most/);
  });

  it('prints its version, exit 0', async () => {
    const { version } = JSON.parse(readFileSync(join(root, 'packages', 'cloud-browser', 'package.json'), 'utf8')) as {
      version: string;
    };
    const r = await cli(['--version']);
    expect([r.code, r.stdout.trim()]).toEqual([0, version]);
  });

  it.each([
    ['an unknown flag', ['url', '--no-such-flag']],
    ['an unknown command', ['no-such-command']],
    ['a flag without its value', ['url', '--timeout']],
  ])('exits 2 on a usage error: %s', async (_what, args) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/error: /);
  });

  it('takes secrets from standard input, a file or the environment instead of argv', async () => {
    const base = ['url', '--browser-url', 'wss://b.test', '--key', KEY, '--vnc', '--show-secrets'];
    const piped = await cliWithInput([...base, '--vnc-password-file', '-'], 'from-stdin-pw\n', baseEnv());
    expect(piped.stdout).toContain('vnc_password=from-stdin-pw');
    const file = join(mkdtempSync(join(tmpdir(), 'cli-secret-')), 'vnc');
    writeFileSync(file, 'from-file-pw\n');
    expect((await cli([...base, '--vnc-password-file', file])).stdout).toContain('vnc_password=from-file-pw');
    const fromEnv = await cli(base, { ...baseEnv(), CLOUD_VNC_PASSWORD: 'from-env-pw' });
    expect(fromEnv.stdout).toContain('vnc_password=from-env-pw');
    const proxy = await cli(['url', '--browser-url', 'wss://b.test', '--key', KEY], {
      ...baseEnv(),
      CLOUD_BYOP_PROXY: 'http://u:proxy-pw-9@127.0.0.1:3128',
    });
    expect(proxy.stdout).toContain('byop_proxy=');
    expect(proxy.stdout + proxy.stderr).not.toContain('proxy-pw-9');
    const missing = await cli([...base, '--vnc-password-file', join(tmpdir(), 'no-such-file-here')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--vnc-password-file');
  });
});

describe('against the emulator command', () => {
  let emulator: Awaited<ReturnType<typeof start>>;
  let site: CrawlSite;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    site = await startCrawlSite();
    emulator = await start(['emulator', '--port', '0', '--api-key', KEY], /CLOUD_API_KEY=/);
    const vars = Object.fromEntries(
      emulator
        .output()
        .split('\n')
        .filter((l) => l.startsWith('CLOUD_'))
        .map((l) => l.split('=', 2)),
    );
    env = { ...baseEnv(), ...vars };
  }, 90_000);
  afterAll(async () => {
    expect(await emulator.stop()).toBe(0);
    expect(emulator.output()).toContain('emulator stopped');
    await site.close();
  });

  it('prints the URLs and key to use', () => {
    expect(env.CLOUD_BROWSER_URL).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/$/);
    expect(env.CLOUD_API_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(env.CLOUD_API_KEY).toBe(KEY);
    expect(emulator.output()).toContain(`dashboard: ${env.CLOUD_API_URL}/?key=${KEY}\n`);
    expect(emulator.output()).toMatch(/native VNC port: \d+\n/);
  });

  it('runs a crawl from start to prompt, with --json for scripts, and never prints the key', async () => {
    const started = await cli(
      ['crawl', 'start', '--url', `${site.origin}/`, '--search', '--page-limit', '10', '--json'],
      env,
    );
    expect(started.code).toBe(0);
    const { uuid } = JSON.parse(started.stdout) as { uuid: string };
    const waited = await cli(['crawl', 'wait', uuid, '--poll', '100'], env);
    expect(waited.code).toBe(0);
    expect(waited.stdout).toMatch(/^DONE: 10 visited, \d+ failed, \d+ skipped/);
    expect(waited.stderr).toMatch(/visited \d+ of \d+, failed \d+, \d+ s\n/);
    const status = JSON.parse((await cli(['crawl', 'status', uuid, '--json'], env)).stdout) as { status: string };
    expect(status.status).toBe('DONE');
    const urls = (await cli(['crawl', 'urls', uuid, '--status', 'visited'], env)).stdout.trim().split('\n');
    expect(urls).toHaveLength(10);
    expect(urls[0]).toMatch(/^visited\thttp:\/\/127\.0\.0\.1/);
    const search = await cli(['crawl', 'search', 'subscription', '--crawl', uuid], env);
    expect(search.stdout).toContain('/docs/7');
    const prompt = await cli(['crawl', 'prompt', 'How much is the subscription?', '--crawl', uuid], env);
    expect(prompt.stdout).toContain('42 euros');
    const dir = mkdtempSync(join(tmpdir(), 'cli-artifact-'));
    const artifact = await cli(['crawl', 'artifact', uuid, '--type', 'har', '--out', join(dir, 'crawl.har')], env);
    expect(artifact.code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'crawl.har'), 'utf8')).log.entries.length).toBe(10);
    const contents = await cli(
      ['crawl', 'contents', uuid, '--formats', 'markdown', '--url', `${site.origin}/docs/7`],
      env,
    );
    expect(contents.stdout).toContain(`## ${site.origin}/docs/7 (markdown)\n# Doc 7`);
    const refresh = await cli(['crawl', 'refresh', uuid], env);
    expect(refresh.code).toBe(1);
    expect(refresh.stderr).toMatch(/^error ERR::CRAWLER::REFRESH_NOT_ENABLED: .*\(start the crawl with --refresh\)/);
    for (const r of [started, waited, prompt, refresh]) expect(r.stdout + r.stderr).not.toContain(KEY);
  }, 60_000);

  it('cancels a running crawl', async () => {
    const { uuid } = JSON.parse(
      (
        await cli(
          [
            'crawl',
            'start',
            '--url',
            `${site.origin}/`,
            '--config',
            writeConfig({ delay: 300, max_concurrency: 1 }),
            '--json',
          ],
          env,
        )
      ).stdout,
    ) as { uuid: string };
    const cancelled = await cli(['crawl', 'cancel', uuid], env);
    expect(cancelled.stdout.trim()).toBe(`cancelled: ${uuid}`);
    const waited = await cli(['crawl', 'wait', uuid], env);
    expect(waited.code).toBe(1);
    expect(waited.stderr).toMatch(
      /^error ERR::CRAWLER::CANCELLED: the crawl .* ended cancelled \(user_cancelled\) \(see `cloud-browser crawl status <uuid>`/m,
    );
  }, 60_000);

  it('shows a progress bar on a terminal', async () => {
    const { uuid } = JSON.parse(
      (await cli(['crawl', 'start', '--url', `${site.origin}/`, '--page-limit', '20', '--json'], env)).stdout,
    ) as { uuid: string };
    const command = `${process.execPath} ${bin} crawl wait ${uuid} --poll 50`;
    const { stdout } = await promisify(execFile)('script', ['-qec', command, '/dev/null'], { env, timeout: 60_000 });
    // Carriage return, erase-line escape, then the bar.
    expect(stdout).toContain(`\r${String.fromCharCode(27)}[2K[`);
    expect(stdout).toMatch(/\[[#.]{24}\] visited \d+ of \d+/);
    expect(stdout).toContain('DONE: 20 visited');
  }, 60_000);

  it('connect says a session closed by its client ended normally, not "code 1011", and exits 0', async () => {
    const connect = await start(['connect', '--timeout', '120'], /holding the session/, env);
    const endpoint = /cdp endpoint: (\S+)/.exec(connect.output())?.[1] ?? '';
    const exited = new Promise<number | null>((resolve) => connect.child.once('exit', resolve));
    const browser = await chromium.connectOverCDP(endpoint);
    await browser.close(); // Browser.close through the relay: the remote browser ends
    expect(await exited).toBe(0);
    expect(connect.output()).toMatch(/session ended normally\n/);
    expect(connect.output()).not.toMatch(/1011|1005|1006/);
  }, 60_000);

  it('connect holds a session that other tools attach to, and closes it cleanly on Ctrl-C', async () => {
    const connect = await start(
      ['connect', '--vnc', '--vnc-password', 'vnc-cli-pw', '--timeout', '120', '--view'],
      /holding the session/,
      env,
    );
    const endpoint = /cdp endpoint: (\S+)/.exec(connect.output())?.[1] ?? '';
    expect(endpoint).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/[0-9a-f-]{36}$/);
    // The emulator's native port: 5901 unless another emulator of this test run holds it.
    const vncPort = /native VNC port: (\d+)/.exec(emulator.output())?.[1];
    expect(connect.output()).toMatch(
      new RegExp(`vnc: vnc://run-[0-9a-f]+@127\\.0\\.0\\.1:${vncPort} password [0-9a-f]{8}-vnc-cli-pw`),
    );
    const runId = /run id: (\S+)/.exec(connect.output())?.[1] ?? '';
    expect(connect.output()).toContain(`live view: ${env.CLOUD_API_URL}/?view=${runId}\n`);
    const browser = await chromium.connectOverCDP(endpoint);
    const page = await browser.contexts()[0]?.newPage();
    await page?.goto(`${site.origin}/docs/1`);
    expect(await page?.title()).toBe('Doc 1');
    expect(await connect.stop()).toBe(0);
    expect(connect.output()).toContain('session closed');
    expect(connect.output()).not.toContain(KEY);
  }, 60_000);

  it('creates a vault, prints its key once with a warning, adds and lists items with the key from a file, env or stdin, rotates and removes it', async () => {
    const created = await cli(['vault', 'create', 'CliVault', '--json'], env);
    expect(created.code).toBe(0);
    expect(created.stderr).toContain('store this vault key now');
    const { id, key } = JSON.parse(created.stdout) as { id: string; key: string };
    expect(key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    const dir = mkdtempSync(join(tmpdir(), 'cli-vault-'));
    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, `${key}\n`);
    const secretFile = join(dir, 'secret.json');
    writeFileSync(secretFile, JSON.stringify({ password: 'cli-item-password' }));
    const add = ['vault', 'item', 'add', id, '--type', 'password', '--label', 'Shop', '--origin', 'https://shop.test'];
    expect((await cli([...add, '--secret-file', secretFile, '--key-file', keyFile], env)).stdout).toMatch(
      /^added: item_/,
    );
    expect((await cli([...add, '--secret-file', secretFile], { ...env, CLOUD_VAULT_KEY: key })).stdout).toMatch(
      /^added: item_/,
    );
    const piped = await cliWithInput([...add, '--secret-file', secretFile, '--key-file', '-'], key, env);
    expect(piped.stdout).toMatch(/^added: item_/);
    const listed = await cli(['vault', 'item', 'ls', id], env);
    expect(listed.stdout.trim().split('\n')).toHaveLength(3);
    expect(listed.stdout).not.toContain('cli-item-password');
    const noKey = await cli([...add, '--secret-file', secretFile], env);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('--key-file');
    const rotated = await cli(['vault', 'rotate', id, '--key-file', keyFile], env);
    expect(rotated.stdout).toMatch(/key\t[A-Za-z0-9+/]{43}=/);
    expect(rotated.stdout).not.toContain(key);
    const stale = await cli(['vault', 'rotate', id, '--key-file', keyFile], env);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('VAULT_KEY_INVALID');
    expect(`${stale.stdout}${stale.stderr}`).not.toContain(key);
    expect((await cli(['vault', 'ls'], env)).stdout).toContain(`${id}\tCliVault\t3 items`);
    expect((await cli(['vault', 'rm', id], env)).stdout.trim()).toBe(`deleted: ${id}`);
  }, 60_000);

  it('lists and stops sessions, uploads and removes an extension, and unblocks a URL without printing the key', async () => {
    const unblocked = await cli(['unblock', `${site.origin}/docs/1`, '--json'], env);
    expect(unblocked.code).toBe(0);
    const { run_id, ws_url } = JSON.parse(unblocked.stdout) as { run_id: string; ws_url: string };
    expect(ws_url).not.toContain(KEY);
    const listed = await cli(['sessions', 'ls'], env);
    expect(listed.stdout).toContain(run_id);
    expect((await cli(['sessions', 'stop', run_id], env)).stdout.trim()).toBe(`stopped: ${run_id}`);
    expect((await cli(['sessions', 'ls'], env)).stdout).not.toContain(run_id);
    const dir = mkdtempSync(join(tmpdir(), 'cli-ext-'));
    const file = join(dir, 'tool.zip');
    writeFileSync(file, await extensionZip());
    const uploaded = await cli(['extensions', 'upload', file], env);
    expect(uploaded.stdout).toMatch(/^uploaded: ext_\w+\tCliTool 1\.2/);
    const extId = /ext_\w+/.exec(uploaded.stdout)?.[0] ?? '';
    expect((await cli(['extensions', 'ls'], env)).stdout).toContain(`${extId}\tCliTool\t1.2`);
    expect((await cli(['extensions', 'rm', extId], env)).stdout.trim()).toBe(`deleted: ${extId}`);
  }, 60_000);

  it('downloads the recording of a debug session, and says why there is none for another', async () => {
    const recorded = await connectPlaywright(chromium, {
      browser_url: env.CLOUD_BROWSER_URL as string,
      api_key: KEY,
      debug: true,
      resolution: '320x240',
    });
    const page = await (recorded.browser.contexts()[0] ?? (await recorded.browser.newContext())).newPage();
    await page.goto(`${site.origin}/`);
    await page.waitForTimeout(500);
    await recorded.close();
    const out = join(mkdtempSync(join(tmpdir(), 'cli-rec-')), 'run.webm');
    const done = await cli(['recording', recorded.runId as string, '--out', out], env);
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(
      new RegExp(`^wrote ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: \\d+ bytes, 320x240, \\d+\\.\\d s\n$`),
    );
    expect(readFileSync(out).subarray(0, 4).toString('hex')).toBe('1a45dfa3');
    const plain = await connectPlaywright(chromium, { browser_url: env.CLOUD_BROWSER_URL as string, api_key: KEY });
    await plain.close();
    const refused = await cli(['recording', plain.runId as string, '--out', `${out}.2`], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('was not opened with debug: true');
    const badWait = await cli(['recording', plain.runId as string, '--wait', 'soon'], env);
    expect(badWait.stderr).toContain('`--wait` must be a whole number of seconds');
  }, 60_000);
});

describe('cloud-browser webhooks serve', () => {
  it('prints each verified delivery and each refusal', async () => {
    const serve = await start(['webhooks', 'serve', '--secret', 'whsec-cli-1', '--port', '0'], /receiving on/);
    const url = /receiving on (\S+)/.exec(serve.output())?.[1] ?? '';
    const signed = signDelivery({
      body: crawlBody('crawler_finished', 'c'),
      secret: 'whsec-cli-1',
      resourceType: 'crawl',
      contentEncoding: 'gzip',
    });
    expect(
      (await fetch(url, { method: 'POST', headers: signed.headers, body: new Uint8Array(signed.body) })).status,
    ).toBe(200);
    expect(
      (await fetch(url, { method: 'POST', headers: { 'x-service-webhook-resource-type': 'crawl' }, body: '{}' }))
        .status,
    ).toBe(401);
    await new Promise((r) => setTimeout(r, 100));
    expect(await serve.stop()).toBe(0);
    expect(serve.output()).toMatch(/delivery crawl crawler_finished \d+ bytes/);
    expect(serve.output()).toContain('refused 401: the delivery is not signed');
    expect(serve.output()).not.toContain('whsec-cli-1');
  }, 30_000);
});

describe('cloud-browser crawl start --config', () => {
  it('names the file, the line and the column of a mistake, exit 2', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cli-config-')), 'crawl.json');
    writeFileSync(file, '{\n  "url": "http://127.0.0.1:1/",\n  "page_limit": 5,,\n}\n');
    const r = await cli(['crawl', 'start', '--config', file, '--key', KEY, '--api-url', 'http://127.0.0.1:1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--config ${file}, line 3 column 19:`);
  });

  it('names a file it cannot read', async () => {
    const r = await cli([
      'crawl',
      'start',
      '--config',
      '/no/such/crawl.json',
      '--key',
      KEY,
      '--api-url',
      'http://127.0.0.1:1',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--config /no/such/crawl.json: ENOENT');
  });
});

describe('cloud-browser demo', () => {
  /** Install a workspace package as npm would: its package.json and dist, its dependencies linked. */
  function install(project: string, dir: string, withDependencies = true): void {
    const manifest = JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as {
      name: string;
      dependencies: Record<string, string>;
    };
    const target = join(project, 'node_modules', manifest.name);
    mkdirSync(target, { recursive: true });
    cpSync(join(root, 'packages', dir, 'dist'), join(target, 'dist'), { recursive: true });
    cpSync(join(root, 'packages', dir, 'package.json'), join(target, 'package.json'));
    for (const name of Object.keys(manifest.dependencies).filter(
      (n) => withDependencies && !n.startsWith('cloud-browser'),
    )) {
      if (existsSync(join(project, 'node_modules', name))) continue;
      mkdirSync(join(project, 'node_modules', name, '..'), { recursive: true });
      symlinkSync(join(root, 'node_modules', name), join(project, 'node_modules', name), 'dir');
    }
  }
  const demoIn = (project: string) =>
    promisify(execFile)(process.execPath, [join(project, 'node_modules', 'cloud-browser', 'dist', 'cli.js'), 'demo'], {
      env: baseEnv(),
      timeout: 60_000,
    }).catch((e: { code: number; stderr: string }) => e);

  it('from an installed client without the emulator, says which package to add; with it but without Playwright, says that', async () => {
    const project = mkdtempSync(join(tmpdir(), 'cli-installed-'));
    install(project, 'cloud-browser');
    const alone = await demoIn(project);
    expect(alone).toMatchObject({ code: 1 });
    expect((alone as { stderr: string }).stderr).toContain(
      'in the package cloud-browser-emulator, which is not installed: add it with `npm install --save-dev cloud-browser-emulator`',
    );
    install(project, 'emulator', false);
    // Installed, but broken (a dependency missing): that error, not 'not installed'.
    const broken = (await demoIn(project)) as { stderr: string };
    expect(broken).toMatchObject({ code: 1 });
    expect(broken.stderr).toMatch(
      /Cannot find package '(linkedom|htmlparser2|turndown|robots-parser|html-to-text|@mozilla\/readability|yauzl)'/,
    );
    expect(broken.stderr).not.toContain('which is not installed');
    rmSync(join(project, 'node_modules', 'cloud-browser-emulator'), { recursive: true });
    install(project, 'emulator');
    const withEmulator = await demoIn(project);
    expect(withEmulator).toMatchObject({ code: 1 });
    expect((withEmulator as { stderr: string }).stderr).toContain('run `npm install playwright-core`');
  }, 90_000);

  it('runs the main job and exits 0', async () => {
    const r = await cli(['demo']);
    // What it printed, when it failed or was killed (code null: it did not exit by itself).
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('title:   Acme Rockets');
    expect(r.stdout).toMatch(/run id: {2}run-[0-9a-f]+/);
    expect(r.stdout).toMatch(/VNC: {5}vnc:\/\/run-[0-9a-f]+@127\.0\.0\.1:\d+ {2}password [0-9a-f]{8}-demo-/);
    expect(r.stdout).toMatch(/view: {4}RFB 3\.8, password accepted, \d+x\d+ "cloud-browser run-[0-9a-f]+"/);
    expect(r.stdout).toMatch(/summary: 4 visited, 0 failed/);
    expect(r.stdout).toContain('Subscriptions start at 300 dollars per month');
    expect(r.stdout).toContain('events: crawler_started, crawler_search_ready, crawler_finished');
  }, 90_000);
});
