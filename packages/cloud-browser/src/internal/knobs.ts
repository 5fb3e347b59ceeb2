/** Checks of numeric knobs: finite, whole where they count, in range (never `NaN`). Pure. */
import type { ConfigIssue } from '../errors.js';
import { show } from './issues.js';

/** What a numeric option must be. */
export interface NumberRule {
  min: number;
  max?: number | undefined;
  /** Whole numbers only. @default true */
  integer?: boolean | undefined;
  /** What it counts, for the message (`milliseconds`, `URLs`). */
  unit: string;
}

/**
 * The problem with an optional numeric option, or undefined when it is absent or right.
 *
 * @example
 * checkNumber('timeout', NaN, { min: 1, unit: 'milliseconds' }) // { option: 'timeout', message: '`timeout` must be…' }
 */
export function checkNumber(name: string, value: unknown, rule: NumberRule): ConfigIssue | undefined {
  if (value === undefined) return undefined;
  const whole = rule.integer !== false;
  const range = rule.max === undefined ? `at least ${rule.min}` : `from ${rule.min} to ${rule.max}`;
  const wanted = `\`${name}\` must be a ${whole ? 'whole ' : ''}number of ${rule.unit}, ${range}`;
  if (typeof value !== 'number' || !Number.isFinite(value) || (whole && !Number.isInteger(value))) {
    return { option: name, message: `${wanted} (got ${show(value)})` };
  }
  if (value < rule.min || (rule.max !== undefined && value > rule.max)) {
    return { option: name, message: `${wanted} (got ${value})` };
  }
  return undefined;
}

/**
 * Every problem among several numeric options at once.
 *
 * @example
 * numberIssues({ limit: [options.limit, { min: 1, max: 50, unit: 'results' }] })
 */
export function numberIssues(checks: Record<string, [unknown, NumberRule]>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const [name, [value, rule]] of Object.entries(checks)) {
    const issue = checkNumber(name, value, rule);
    if (issue) issues.push(issue);
  }
  return issues;
}
