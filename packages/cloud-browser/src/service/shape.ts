/**
 * A small description language for the service browser's own DevTools domains: one value per
 * parameter, answer and event that both checks a message at run time (the emulator's parameter
 * errors, the connectors' typed errors, the tests' shape checks) and gives its TypeScript type
 * (`Infer`). The published types are these, so they stand alone: no schema library in a `.d.ts`.
 */

/** A described value: `check` returns what is wrong with `value` (at `path`), or undefined. */
export interface Shape<T> {
  /** How the value is described in a message: `a number`, `one of "css", "xpath"`. */
  readonly expects: string;
  /** Whether the field may be left out of its object. */
  readonly optional: boolean;
  check(value: unknown, path: string, exact: boolean): string | undefined;
  /** Never set: carries `T` for `Infer`. */
  readonly _type?: T;
}

/** The TypeScript type a shape describes. */
export type Infer<S> = S extends Shape<infer T> ? T : never;

type Fields = Record<string, Shape<unknown>>;
type OptionalKeys<F extends Fields> = { [K in keyof F]: F[K]['optional'] extends true ? K : never }[keyof F];
type RequiredKeys<F extends Fields> = Exclude<keyof F, OptionalKeys<F>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
/** The object type of `fields`: optional shapes become optional keys. */
export type ObjectOf<F extends Fields> = Simplify<
  { [K in RequiredKeys<F>]: Infer<F[K]> } & { [K in OptionalKeys<F>]?: Infer<F[K]> }
>;

function shape<T>(expects: string, test: (value: unknown, path: string, exact: boolean) => string | undefined) {
  return {
    expects,
    optional: false as const,
    check: test,
  } as Shape<T> & { optional: false };
}

const wrong = (path: string, expects: string, value: unknown) =>
  `${path || 'params'}: expected ${expects}, got ${value === undefined ? 'nothing' : JSON.stringify(value)?.slice(0, 60)}`;

/** A string. */
export const string = () =>
  shape<string>('a string', (v, p) => (typeof v === 'string' ? undefined : wrong(p, 'a string', v)));

/** A boolean. */
export const boolean = () =>
  shape<boolean>('a boolean', (v, p) => (typeof v === 'boolean' ? undefined : wrong(p, 'a boolean', v)));

/** A finite number, optionally an integer within bounds. */
export function number(rule: { int?: boolean; min?: number; max?: number } = {}) {
  const parts = [rule.int ? 'an integer' : 'a finite number'];
  if (rule.min !== undefined) parts.push(`>= ${rule.min}`);
  if (rule.max !== undefined) parts.push(`<= ${rule.max}`);
  const expects = parts.join(' ');
  return shape<number>(expects, (v, p) =>
    typeof v === 'number' &&
    Number.isFinite(v) &&
    (!rule.int || Number.isInteger(v)) &&
    (rule.min === undefined || v >= rule.min) &&
    (rule.max === undefined || v <= rule.max)
      ? undefined
      : wrong(p, expects, v),
  );
}

/** One of a few strings. */
export function oneOf<const V extends readonly string[]>(values: V) {
  const expects = `one of ${values.map((v) => JSON.stringify(v)).join(', ')}`;
  return shape<V[number]>(expects, (v, p) =>
    typeof v === 'string' && values.includes(v) ? undefined : wrong(p, expects, v),
  );
}

/** The field may be left out. */
export function optional<T>(inner: Shape<T>): Shape<T> & { optional: true } {
  return {
    expects: inner.expects,
    optional: true,
    check: (v, p, exact) => (v === undefined ? undefined : inner.check(v, p, exact)),
  };
}

/** An array of one shape. */
export function array<T>(item: Shape<T>) {
  const expects = `an array of ${item.expects}`;
  return shape<T[]>(expects, (v, p, exact) => {
    if (!Array.isArray(v)) return wrong(p, expects, v);
    for (const [i, x] of v.entries()) {
      const problem = item.check(x, `${p}[${i}]`, exact);
      if (problem) return problem;
    }
    return undefined;
  });
}

/** An object whose keys are free and whose values share one shape. */
export function record<T>(value: Shape<T>) {
  const expects = `an object of ${value.expects}`;
  return shape<Record<string, T>>(expects, (v, p, exact) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return wrong(p, expects, v);
    for (const [k, x] of Object.entries(v)) {
      const problem = value.check(x, `${p}[${JSON.stringify(k)}]`, exact);
      if (problem) return problem;
    }
    return undefined;
  });
}

/** An object of named fields; with `exact`, a key not described is wrong too. */
export function object<F extends Fields>(fields: F): Shape<ObjectOf<F>> & { optional: false; fields: F } {
  const expects = 'an object';
  const base = shape<ObjectOf<F>>(expects, (v, p, exact) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return wrong(p, expects, v);
    const value = v as Record<string, unknown>;
    for (const [k, field] of Object.entries(fields)) {
      const problem = field.check(value[k], p ? `${p}.${k}` : k, exact);
      if (problem) return problem;
    }
    if (exact) {
      const extra = Object.keys(value).find((k) => !(k in fields));
      if (extra) return `${p ? `${p}.` : ''}${extra}: not a field of this ${p ? 'object' : 'message'}`;
    }
    return undefined;
  });
  return { ...base, fields };
}

/** One command: its parameters and its answer. */
export interface CommandShape<P extends Fields, R extends Fields> {
  params: Shape<ObjectOf<P>> & { fields: P };
  result: Shape<ObjectOf<R>> & { fields: R };
}

/** Describe a command by its parameters' and its answer's fields. */
export function command<P extends Fields, R extends Fields>(params: P, result: R): CommandShape<P, R> {
  return { params: object(params), result: object(result) };
}
