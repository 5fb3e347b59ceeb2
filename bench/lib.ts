/** Small helpers shared by the benchmarks: timing, medians, printing ratios. */

/** Median of a list of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** Operations per second of `fn`, median of `rounds` rounds of at least `minMs` each. */
export function opsPerSecond(fn: () => unknown, rounds = 7, minMs = 200): number {
  const results: number[] = [];
  let batch = 1;
  for (let warm = performance.now(); performance.now() - warm < 100; ) fn();
  for (let r = 0; r < rounds; r++) {
    let n = 0;
    const start = performance.now();
    let elapsed = 0;
    while (elapsed < minMs) {
      for (let i = 0; i < batch; i++) fn();
      n += batch;
      elapsed = performance.now() - start;
      if (elapsed < minMs / 10) batch *= 2;
    }
    results.push((n / elapsed) * 1000);
  }
  return median(results);
}

/** Print one comparison line and say whether it meets its goal. */
export function report(name: string, ratio: number, goal: string, ok: boolean, detail: string): void {
  console.log(`${name}: ratio ${ratio.toFixed(3)} (goal ${goal}) ${ok ? 'OK' : 'MISSED'} — ${detail}`);
}

/**
 * Run both sides `rounds` times, back to back and in alternating order, and give each round's
 * ratio (ours over bare, of `value`) and their median. The machines are shared and their speed
 * drifts between runs: a round compares two runs made under the same conditions.
 */
export async function pairedRounds<T>(
  rounds: number,
  ours: () => Promise<T>,
  bare: () => Promise<T>,
  value: (result: T) => number,
): Promise<{ ours: T[]; bare: T[]; ratios: number[]; ratio: number }> {
  const out = { ours: [] as T[], bare: [] as T[], ratios: [] as number[] };
  for (let i = 0; i < rounds; i++) {
    if (i % 2) {
      out.ours.push(await ours());
      out.bare.push(await bare());
    } else {
      out.bare.push(await bare());
      out.ours.push(await ours());
    }
    out.ratios.push(value(out.ours[i] as T) / value(out.bare[i] as T));
  }
  return { ...out, ratio: median(out.ratios) };
}

/** Per-round ratios, for the report line. */
export const showRatios = (ratios: readonly number[]) => ratios.map((r) => r.toFixed(2)).join(' ');
