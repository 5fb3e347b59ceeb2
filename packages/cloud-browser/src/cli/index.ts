#!/usr/bin/env node

/** The `cloud-browser` command. */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Command, Option } from 'commander';
import type { ContentFormat, CrawlConfig } from '../crawler/schema.js';
import type { CrawlUrlStatus } from '../crawler/wire.js';
import { ConfigError } from '../errors.js';
import { loadEmulatorCommands } from './emulator.js';
import { fail, Progress, print } from './output.js';
import { addRestCommands } from './rest.js';
import { addSessionOptions, browserUrlFrom } from './session-options.js';
import { interrupted } from './signals.js';
import { VERSION } from './version.js';

// What a command runs is loaded when it runs: `--version`, `--help` and `url` never read the
// connectors, the crawler client or the webhook receiver (bench: `npm run bench -- cli`).
const load = {
  api: () => import('../api/client.js'),
  relay: () => import('../connect/relay.js'),
  session: () => import('../connect/session.js'),
  socket: () => import('../connect/socket.js'),
  crawler: () => import('../crawler/client.js'),
  redact: () => import('../internal/redact.js'),
  webhooks: () => import('../webhooks/adapters.js'),
  events: () => import('../webhooks/events.js'),
  config: () => import('./config-file.js'),
};

const program = new Command();
program
  .name('cloud-browser')
  .description('Cloud browser sessions, crawls and webhooks, against the service or the local emulator.')
  .version(VERSION, '-V, --version', 'print the version')
  .option('--verbose', 'print the (redacted) cause of an error')
  .showHelpAfterError('(add --help for usage)')
  // A usage error (unknown flag or command, a missing value) exits 2, as an invalid value does;
  // --help and --version exit 0. Inherited by every command defined below.
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2));

const verbose = () => program.opts<{ verbose?: boolean }>().verbose === true;
const run =
  <A extends unknown[]>(fn: (...args: A) => Promise<void>) =>
  async (...args: A) => {
    try {
      await fn(...args);
    } catch (error) {
      fail(error, verbose());
    }
  };

program
  .command('demo')
  .description('Run the main job on the embedded emulator: browser with VNC, crawl, search, prompt, webhooks')
  .addHelpText('after', '\nExample:\n  $ cloud-browser demo')
  .action(run(async () => (await loadEmulatorCommands('demo')).runDemo()));

program
  .command('emulator')
  .description('Serve the local emulator until Ctrl-C')
  .option('--port <port>', 'port to listen on (0 picks one)', '0')
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .option('--chromium <path>', 'the browser to run (default: CHROME_PATH, the system, @sparticuz/chromium)')
  .option('--api-key <key>', 'the key to accept (default: a new one)')
  .addHelpText('after', '\nExample:\n  $ cloud-browser emulator --port 9222')
  .action(
    run(async (opts: { port: string; host: string; chromium?: string; apiKey?: string }) =>
      (await loadEmulatorCommands('emulator')).serveEmulator(opts),
    ),
  );

addSessionOptions(
  program
    .command('url')
    .description('Print the validated browser URL (secrets redacted unless --show-secrets)')
    .option('--show-secrets', 'print the URL with its key and passwords')
    .addHelpText(
      'after',
      '\nExample:\n  $ cloud-browser url --proxy-pool residential --languages en-US,fr --timeout 600',
    ),
).action(
  run(async (opts: Record<string, unknown>) => {
    const url = await browserUrlFrom(opts);
    process.stdout.write(`${opts.showSecrets ? url.href : (await load.redact()).redactUrl(url)}\n`);
  }),
);

/** Open `url` in the user's browser, as the platform does; a failure to open is only reported. */
function openInBrowser(url: string): void {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  const child = spawn(command, args as string[], { stdio: 'ignore', detached: true });
  child.on('error', () => process.stderr.write(`could not open a browser: open ${url} yourself\n`));
  child.unref();
}

addSessionOptions(
  program
    .command('connect')
    .description('Open a session and hold it: prints the run id, a local CDP endpoint and the VNC credentials')
    .option('--view', "print the address of the session's live view (the emulator's dashboard)")
    .option('--open', 'open the live view in your browser (implies --view)')
    .addHelpText(
      'after',
      '\nExample:\n  $ cloud-browser connect --vnc --vnc-password s3cret --timeout 900\n  then attach: chromium.connectOverCDP(<cdp endpoint>)',
    ),
).action(
  run(async (opts: Record<string, unknown>) => {
    const url = await browserUrlFrom(opts);
    const opened = await (await load.session()).openSession(url, { retries: 2 });
    const relay = await (await load.relay()).startRelay(opened.socket);
    process.stdout.write(`run id: ${opened.socket.runId ?? '(none)'}\ncdp endpoint: ${relay.url}\n`);
    if (opened.vnc) {
      process.stdout.write(`vnc: ${opened.vnc.tcp.url} password ${opened.vnc.tcp.password}\n`);
      process.stdout.write(`vnc websocket: ${opened.vnc.websocket.url} password ${opened.vnc.websocket.password}\n`);
    }
    if ((opts.view || opts.open) && opened.socket.runId) {
      const view = `${(await load.api()).restBaseOf(url)}/?view=${encodeURIComponent(opened.socket.runId)}`;
      process.stdout.write(`live view: ${view}\n`);
      if (opts.open) openInBrowser(view);
    }
    process.stdout.write('holding the session (Ctrl-C to close it)\n');
    const why = await Promise.race([interrupted(), opened.socket.closed.then((e) => e)]);
    if (typeof why === 'string') {
      opened.socket.send(JSON.stringify({ id: (await load.socket()).RESERVED_CDP_ID, method: 'Browser.close' }));
      await Promise.race([opened.socket.closed, new Promise((r) => setTimeout(r, 5000))]);
      process.stdout.write('session closed\n');
    } else {
      const how = why.closeCode === 1000 ? 'normally' : `with code ${why.closeCode}`;
      process.stdout.write(`session ended ${how}${why.reason ? `: ${why.reason}` : ''}\n`);
    }
    await relay.close();
    await opened.socket.close();
  }),
);

addSessionOptions(
  program
    .command('mcp')
    .description(
      'Serve a cloud browser session to an AI agent over MCP: standard input and output, or loopback HTTP with --http',
    )
    .option('--http <port>', 'serve streamable HTTP at http://127.0.0.1:<port>/mcp instead (0 picks a port)')
    .addHelpText(
      'after',
      '\nExample:\n  $ CLOUD_API_KEY=... cloud-browser mcp --country de\n  $ cloud-browser mcp --http 8931',
    ),
).action(run(async (opts: Record<string, unknown>) => (await import('./mcp.js')).serveMcp(opts)));

const crawl = program.command('crawl').description('Start, follow and read crawls');
const client = async (opts: { key?: string; apiUrl?: string }) =>
  new (await load.crawler()).CrawlerClient({ key: opts.key, baseUrl: opts.apiUrl });
const common = (c: Command) =>
  c
    .option('--key <key>', 'the API key (default: CLOUD_API_KEY)')
    .option('--api-url <url>', 'the service (default: CLOUD_API_URL)')
    .option('--json', 'print JSON for scripts');
type Common = { key?: string; apiUrl?: string; json?: boolean };

common(
  crawl
    .command('start')
    .description('Start a crawl from flags, --config file.json and/or --url-list file.txt')
    .option('--url <url>', 'the starting URL')
    .option('--url-list <file>', 'a file with one URL per line')
    .option('--remote-url-list <url>', 'the address of a URL list')
    .option('--config <file>', 'a JSON file of crawl options (spec wire names)')
    .option('--page-limit <n>', 'maximum pages')
    .option('--max-depth <n>', 'maximum depth')
    .option('--content-formats <list>', 'html,markdown,text,clean_html')
    .option('--search', 'build a search index')
    .option('--refresh', 'keep the crawl fresh')
    .option('--refresh-interval <seconds>', '3600 to 7776000')
    .option('--webhook-name <name>', 'the webhook to notify')
    .addHelpText(
      'after',
      '\nExample:\n  $ cloud-browser crawl start --url https://example.com --page-limit 50 --search',
    ),
).action(
  run(async (opts: Common & Record<string, string | boolean | undefined>) => {
    const config: Record<string, unknown> = opts.config
      ? await (await load.config()).readConfigFile(String(opts.config))
      : {};
    if (opts.url) config.url = opts.url;
    if (opts.remoteUrlList) config.remote_url_list = opts.remoteUrlList;
    if (opts.urlList)
      config.url_list = (await readFile(String(opts.urlList), 'utf8'))
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter(Boolean);
    for (const [flag, name] of [
      ['pageLimit', 'page_limit'],
      ['maxDepth', 'max_depth'],
      ['refreshInterval', 'refresh_interval'],
    ] as const) {
      if (opts[flag] !== undefined) config[name] = /^\d+$/.test(String(opts[flag])) ? Number(opts[flag]) : opts[flag];
    }
    if (opts.contentFormats) config.content_formats = String(opts.contentFormats).split(',');
    if (opts.search) config.search = true;
    if (opts.refresh) config.refresh = true;
    if (opts.webhookName) config.webhook_name = opts.webhookName;
    const started = await (await client(opts)).start(config as CrawlConfig);
    print(opts.json ? started : started.uuid, opts.json === true);
  }),
);

common(crawl.command('status <uuid>').description('Print a crawl status')).action(
  run(async (uuid: string, opts: Common) => {
    const s = await (await client(opts)).status(uuid);
    print(
      opts.json ? s : { uuid: s.uuid, status: s.status, complete: s.is_complete, success: s.is_success, ...s.state },
      opts.json === true,
    );
  }),
);

common(
  crawl
    .command('wait <uuid>')
    .description('Wait for a crawl to complete, with progress')
    .option('--timeout <seconds>', 'give up waiting after this long (the crawl goes on)')
    .option('--poll <ms>', 'poll interval', '1000'),
).action(
  run(async (uuid: string, opts: Common & { timeout?: string; poll: string }) => {
    const progress = new Progress(Boolean(process.stderr.isTTY) && !opts.json);
    const started = Date.now();
    try {
      const done = await (await client(opts)).wait(uuid, {
        pollInterval: Number(opts.poll),
        ...(opts.timeout ? { timeout: Number(opts.timeout) * 1000 } : {}),
        onProgress: (s) => {
          // Of what is known so far: visited and still to crawl.
          const limit = s.state.urls_visited + s.state.urls_to_crawl;
          if (!opts.json)
            progress.update(s.state.urls_visited, limit, s.state.urls_failed, (Date.now() - started) / 1000);
        },
      });
      progress.end();
      print(
        opts.json
          ? done
          : `${done.status}: ${done.state.urls_visited} visited, ${done.state.urls_failed} failed, ${done.state.urls_skipped} skipped`,
        opts.json === true,
      );
    } catch (error) {
      progress.end();
      throw error;
    }
  }),
);

common(
  crawl
    .command('urls <uuid>')
    .description('List the URLs a crawl met')
    .addOption(
      new Option('--status <status>', 'which URLs')
        .choices(['visited', 'pending', 'failed', 'skipped'])
        .default('visited'),
    )
    .option('--per-page <n>', 'URLs a request, 1 to 1000', '100'),
).action(
  run(async (uuid: string, opts: Common & { status: CrawlUrlStatus; perPage: string }) => {
    for await (const u of (await client(opts)).urls(uuid, { status: opts.status, perPage: Number(opts.perPage) }))
      print(opts.json ? u : `${u.status}\t${u.url}${u.reason ? `\t${u.reason}` : ''}`, opts.json === true);
  }),
);

common(
  crawl
    .command('read <uuid> <url>')
    .description('Print one page in one format, as the crawl kept it')
    .addOption(
      new Option('--format <format>', 'the format')
        .choices(['html', 'markdown', 'text', 'clean_html'])
        .default('markdown'),
    ),
).action(
  run(async (uuid: string, url: string, opts: Common & { format: ContentFormat }) => {
    const text = await (await client(opts)).read(uuid, url, { format: opts.format });
    if (text === null)
      throw new ConfigError('crawl read', [{ option: 'url', message: `the crawl kept no ${opts.format} of that URL` }]);
    if (opts.json) print({ url, format: opts.format, content: text }, true);
    else process.stdout.write(`${text}\n`);
  }),
);

common(
  crawl
    .command('contents <uuid>')
    .description('Print page contents')
    .option('--formats <list>', 'html,markdown,text,clean_html', 'markdown')
    .option('--limit <n>', 'pages a request, 1 to 50')
    .option('--url <url>', 'one page only'),
).action(
  run(async (uuid: string, opts: Common & { formats: string; limit?: string; url?: string }) => {
    const formats = opts.formats.split(',') as ContentFormat[];
    const options = {
      formats,
      ...(opts.url ? { url: opts.url } : {}),
      ...(opts.limit ? { limit: Number(opts.limit) } : {}),
    };
    for await (const p of (await client(opts)).contents(uuid, options)) {
      if (opts.json) print(p, true);
      else for (const f of formats) process.stdout.write(`## ${p.url} (${f})\n${p.content[f] ?? ''}\n\n`);
    }
  }),
);

common(
  crawl
    .command('artifact <uuid>')
    .description('Stream an artifact to a file')
    .addOption(new Option('--type <type>', 'warc or har').choices(['warc', 'har']).makeOptionMandatory())
    .requiredOption('--out <file>', 'where to write it'),
).action(
  run(async (uuid: string, opts: Common & { type: 'warc' | 'har'; out: string }) => {
    const artifact = await (await client(opts)).artifact(uuid, { type: opts.type });
    await pipeline(
      Readable.fromWeb(artifact.stream as import('node:stream/web').ReadableStream<Uint8Array>),
      createWriteStream(opts.out),
    );
    print(opts.json ? { file: opts.out, type: opts.type } : `wrote ${opts.out}`, opts.json === true);
  }),
);

common(
  crawl.command('search <query>').description('Search crawls').requiredOption('--crawl <uuid...>', 'crawl ids'),
).action(
  run(async (query: string, opts: Common & { crawl: string[] }) => {
    const res = await (await client(opts)).search({ crawls: opts.crawl, query });
    if (opts.json) return print(res, true);
    for (const r of res.results) process.stdout.write(`${r.score.toFixed(2)}\t${r.url}\t${r.text}\n`);
    for (const s of res.skipped) process.stdout.write(`skipped ${s.crawler_uuid}: ${s.reason}\n`);
  }),
);

common(
  crawl
    .command('prompt <prompt>')
    .description('Ask crawls; the answer streams')
    .requiredOption('--crawl <uuid...>', 'crawl ids'),
).action(
  run(async (prompt: string, opts: Common & { crawl: string[] }) => {
    let text = '';
    const answer = (await client(opts)).prompt({ crawls: opts.crawl, prompt });
    for await (const token of answer) {
      text += token;
      if (!opts.json) process.stdout.write(token);
    }
    if (opts.json) print({ answer: text, sources: answer.sources, done: answer.done }, true);
    else {
      process.stdout.write('\n');
      for (const s of answer.sources) process.stdout.write(`[${s.id}] ${s.url}\n`);
    }
  }),
);

common(
  crawl
    .command('refresh <uuid>')
    .description('Refresh a crawl now, or change its refresh schedule')
    .option('--every <seconds>', 'refresh on this period, 3600 to 7776000 seconds')
    .option('--off', 'stop refreshing (the period is kept)'),
).action(
  run(async (uuid: string, opts: Common & { every?: string; off?: boolean }) => {
    const c = await client(opts);
    if (opts.every === undefined && !opts.off) {
      const res = await c.refresh(uuid);
      return print(opts.json ? res : `refresh started: ${uuid}`, opts.json === true);
    }
    const every = opts.every === undefined ? undefined : /^\d+$/.test(opts.every) ? Number(opts.every) : Number.NaN;
    const res = await c.updateRefresh(uuid, {
      ...(opts.off ? { refresh: false } : { refresh: true }),
      ...(every === undefined ? {} : { refresh_interval: every }),
    });
    print(
      opts.json ? res : res.enabled ? `refreshing every ${res.interval_seconds} s: ${uuid}` : `refresh off: ${uuid}`,
      opts.json === true,
    );
  }),
);

common(crawl.command('cancel <uuid>').description('Cancel a crawl')).action(
  run(async (uuid: string, opts: Common) => {
    const res = await (await client(opts)).cancel(uuid);
    print(opts.json ? res : `cancelled: ${uuid}`, opts.json === true);
  }),
);

program
  .command('webhooks')
  .description('Receive webhooks')
  .command('serve')
  .description('Run the reference receiver, printing each verified delivery and each refusal')
  .requiredOption('--secret <secret...>', 'signing secret(s)')
  .option('--port <port>', 'port (0 picks one)', '8080')
  .option('--host <host>', 'address', '127.0.0.1')
  .option('--path <path>', 'path', '/webhook')
  .option('--header-prefix <prefix>', 'header prefix: X-Scrapfly-Webhook- for the live service', 'X-Service-Webhook-')
  .addHelpText('after', '\nExample:\n  $ cloud-browser webhooks serve --secret $SIGNING_SECRET --port 8080')
  .action(
    run(async (opts: { secret: string[]; port: string; host: string; path: string; headerPrefix: string }) => {
      const { parseCrawlEvent } = await load.events();
      const receiver = await (await load.webhooks()).serveWebhooks({
        headerPrefix: opts.headerPrefix,
        port: Number(opts.port),
        host: opts.host,
        path: opts.path,
        secrets: opts.secret,
        onDelivery: (d) => {
          let event = '';
          if (d.resourceType === 'crawl') {
            try {
              event = ` ${parseCrawlEvent(d.body).event}`;
            } catch {}
          }
          process.stdout.write(`delivery ${d.resourceType}${event} ${d.body.length} bytes\n`);
        },
        onRefused: (e) => process.stdout.write(`refused ${e.status}: ${e.message}\n`),
      });
      process.stdout.write(`receiving on ${receiver.url} (Ctrl-C to stop)\n`);
      await interrupted();
      await receiver.close();
    }),
  );

addRestCommands(program, run);

void program.parseAsync(process.argv);
