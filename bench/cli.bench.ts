/**
 * How fast the command starts: `cloud-browser --version` and `cloud-browser url …` (the built
 * command, as an installed one runs) against `node -e 0`, each a fresh process. Goal: at most
 * twice Node's own start, which it reaches by loading only what the command it runs needs.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, pairedRounds, report, showRatios } from './lib.js';

const CLI = fileURLToPath(new URL('../packages/cloud-browser/dist/cli.js', import.meta.url));
const ROUNDS = 21;
const env = { ...process.env, CLOUD_API_KEY: 'bench-key-0123456789', CLOUD_BROWSER_URL: 'wss://browser.test/' };

/** Milliseconds one run of `node …args` takes, start to exit. */
function timed(args: string[]): number {
  const start = performance.now();
  execFileSync(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return performance.now() - start;
}

for (const [name, args] of [
  ['cloud-browser --version', [CLI, '--version']],
  ['cloud-browser url --timeout 600 --languages en-US,fr', [CLI, 'url', '--timeout', '600', '--languages', 'en-US,fr']],
] as const) {
  const rounds = await pairedRounds(
    ROUNDS,
    async () => timed([...args]),
    async () => timed(['-e', '0']),
    (ms) => ms,
  );
  report(
    `cli: ${name} vs node -e 0`,
    rounds.ratio,
    '<= 2',
    rounds.ratio <= 2,
    `median of ${ROUNDS} paired rounds (${showRatios(rounds.ratios)}); median ours ${median(rounds.ours).toFixed(0)} ms, node ${median(rounds.bare).toFixed(0)} ms`,
  );
}
