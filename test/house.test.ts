/**
 * Rules of the house that a reader relies on, checked over every source file of both packages:
 * short functions, and comments that cite only what is in the repository.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = ['packages/cloud-browser/src', 'packages/emulator/src'].flatMap((dir) =>
  (readdirSync(join(ROOT, dir), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(ROOT, dir, f)),
);
const MAX_LINES = 80;

/** Every function of `file` (declarations, methods, arrows) longer than `max` lines. */
function longFunctions(file: string, max: number): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
      if (last - first + 1 > max) found.push(`${relative(ROOT, file)}:${first + 1} ${name}: ${last - first + 1} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the sources', () => {
  it(`have no function over ${MAX_LINES} lines`, () => {
    expect(SOURCES.length).toBeGreaterThan(50);
    expect(SOURCES.flatMap((f) => longFunctions(f, MAX_LINES))).toEqual([]);
  });

  it('finds a long function where there is one (the check itself)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'house-'));
    const file = join(dir, 'long.ts');
    const body = Array.from({ length: MAX_LINES }, (_, i) => `  const v${i} = ${i};`).join('\n');
    writeFileSync(file, `export function short() {\n  return 1;\n}\nexport const long = () => {\n${body}\n};\n`);
    expect(longFunctions(file, MAX_LINES)).toEqual([expect.stringMatching(/long.ts:4 \(anonymous\): 82 lines$/)]);
    rmSync(dir, { recursive: true });
  });

  it('cite only documents of the repository, and only sections those documents have', () => {
    const decisions = readFileSync(join(ROOT, 'docs/decisions.md'), 'utf8');
    const wire = readFileSync(join(ROOT, 'docs/wire.md'), 'utf8');
    const wrong: string[] = [];
    for (const file of SOURCES) {
      const text = readFileSync(file, 'utf8');
      const where = relative(ROOT, file);
      // A decision number, a spec part or a decision log named without a document of ours.
      for (const m of text.matchAll(
        /(?<!docs\/decisions\.md |D\d+ to |D\d+ and )\bD\d{1,2}\b|\bspec part\b|\bspec \d|DECISIONS/g,
      )) {
        wrong.push(`${where}: "${m[0]}" names no document of the repository`);
      }
      for (const m of text.matchAll(/docs\/decisions\.md D(\d+)/g)) {
        if (!decisions.includes(`### D${m[1]}\n`)) wrong.push(`${where}: docs/decisions.md has no D${m[1]}`);
      }
      for (const m of text.matchAll(/docs\/wire\.md §(\d+(?:\.\d+)?)/g)) {
        const section = m[1] as string;
        const heading = section.includes('.') ? `### ${section} ` : `## ${section}. `;
        if (!wire.includes(heading)) wrong.push(`${where}: docs/wire.md has no §${section}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
