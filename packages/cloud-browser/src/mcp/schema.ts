/**
 * The tools' input schemas: plain JSON Schema (what MCP lists), and the one check of an agent's
 * arguments against them. Only what the tools use: an object of strings, numbers, booleans,
 * enums, arrays and records; a property not described is ignored, as Playwright's server does.
 */

/** A JSON Schema of the subset the tools use. */
export interface JsonSchema {
  type: 'object' | 'string' | 'number' | 'boolean' | 'array';
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: readonly string[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  additionalProperties?: boolean | Record<string, never>;
}

/** A tool's arguments, once checked. */
export type ToolArgs = Record<string, unknown>;

/** An object schema from its properties; `required` lists those that must be given. */
export function objectSchema(properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

export const str = (description: string): JsonSchema => ({ type: 'string', description });
export const num = (description: string, minimum?: number, maximum?: number): JsonSchema => ({
  type: 'number',
  description,
  ...(minimum === undefined ? {} : { minimum }),
  ...(maximum === undefined ? {} : { maximum }),
});
export const bool = (description: string): JsonSchema => ({ type: 'boolean', description });
export const oneOf = (values: readonly string[], description: string): JsonSchema => ({
  type: 'string',
  enum: values,
  description,
});

/** What is wrong with `value` against `schema`, naming the argument; undefined when nothing is. */
export function argsProblem(schema: JsonSchema, value: unknown, path = 'arguments'): string | undefined {
  switch (schema.type) {
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return `${path} must be an object`;
      const record = value as Record<string, unknown>;
      for (const name of schema.required ?? []) {
        if (record[name] === undefined) return `${path === 'arguments' ? '' : `${path}.`}${name} is required`;
      }
      for (const [name, sub] of Object.entries(schema.properties ?? {})) {
        if (record[name] === undefined) continue;
        const problem = argsProblem(sub, record[name], path === 'arguments' ? name : `${path}.${name}`);
        if (problem) return problem;
      }
      return undefined;
    }
    case 'array': {
      if (!Array.isArray(value)) return `${path} must be an array`;
      for (const [i, item] of value.entries()) {
        const problem = schema.items && argsProblem(schema.items, item, `${path}[${i}]`);
        if (problem) return problem;
      }
      return undefined;
    }
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return `${path} must be a finite number`;
      if (schema.minimum !== undefined && value < schema.minimum) return `${path} must be at least ${schema.minimum}`;
      if (schema.maximum !== undefined && value > schema.maximum) return `${path} must be at most ${schema.maximum}`;
      return undefined;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `${path} must be true or false`;
    default:
      if (typeof value !== 'string') return `${path} must be a string`;
      if (schema.enum && !schema.enum.includes(value)) return `${path} must be one of ${schema.enum.join(', ')}`;
      return undefined;
  }
}
