/**
 * The shape of the schemas this package exports, written here rather than taken from the
 * validation library: the library is bundled, so its types would reach users as imports of a
 * package they do not have. Each public option type is an interface of its own, and a
 * compile-time check keeps it equal to what its schema accepts.
 */

/** One problem a schema found. */
export interface SchemaIssue {
  readonly code: string;
  readonly message: string;
  readonly path: readonly PropertyKey[];
  /** The unknown option names, on an `unrecognized_keys` issue. */
  readonly keys?: readonly string[];
}

/** What {@link Schema.safeParse} answers: the parsed value, or every problem at once. */
export type SafeParseResult<T> =
  | { readonly success: true; readonly data: T; readonly error?: undefined }
  | { readonly success: false; readonly data?: undefined; readonly error: { readonly issues: readonly SchemaIssue[] } };

/**
 * A validating parser of one wire object.
 *
 * @example
 * const result = browserSessionSchema.safeParse({ timeout: 60 });
 * if (!result.success) console.log(result.error.issues.map((i) => i.message));
 */
export interface Schema<T> {
  /** The parsed value; throws on the first call with problems (prefer {@link Schema.safeParse}). */
  parse(input: unknown): T;
  /** The parsed value, or every problem found. */
  safeParse(input: unknown): SafeParseResult<T>;
}

/** `true` when `A` and `B` accept the same values. */
export type Agree<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compiles only when given `true`: `type _ = Assert<Agree<A, B>>`. */
export type Assert<T extends true> = T;
