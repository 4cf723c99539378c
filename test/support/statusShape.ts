// A kind's status interface and its CRD's status schema, held to each other: `ShapeOf` turns the
// interface into the schema types each field must have (the compiler checks a test's constant
// against the interface, field by field), and `shapeDifferences` compares that constant with the
// schema the CRD serves.
import type { Schema } from '../../src/apis/schema.ts';

type ValueShape<V> = V extends string
  ? 'string'
  : V extends number
    ? 'integer' | 'number'
    : V extends boolean
      ? 'boolean'
      : V extends readonly (infer E)[]
        ? readonly [ValueShape<Exclude<E, undefined>>]
        : V extends object
          ? ShapeOf<V>
          : never;

/**
 * The schema type of every field of `T`, every field required: an array is a one-item tuple of its
 * items' shape, an object the shape of its fields.
 */
export type ShapeOf<T> = { readonly [K in keyof T]-?: ValueShape<Exclude<T[K], undefined>> };

/** A shape as data (what a ShapeOf constant is at run time). */
type AnyShape = string | readonly [AnyShape] | { readonly [field: string]: AnyShape };

/**
 * Where `schema`'s properties and `shape` disagree — a field only one has, or another type — as
 * `path: …` lines; empty when they agree. `skip`: schema properties not in the shape (the common
 * status fields the engine writes). Pure.
 */
export function shapeDifferences(
  schema: Schema,
  shape: object,
  skip: readonly string[] = [],
  path = 'status',
): string[] {
  const props = schema.properties ?? {};
  const fields = shape as Readonly<Record<string, AnyShape>>;
  const out: string[] = [];
  for (const name of Object.keys(props))
    if (!skip.includes(name) && !(name in fields)) out.push(`${path}.${name}: in the schema, not the type`);
  for (const [name, want] of Object.entries(fields)) {
    const p = props[name];
    if (p === undefined) out.push(`${path}.${name}: in the type, not the schema`);
    else out.push(...valueDifferences(p, want, `${path}.${name}`));
  }
  return out;
}

function valueDifferences(schema: Schema, want: AnyShape, path: string): string[] {
  if (typeof want === 'string')
    return schema.type === want
      ? []
      : [`${path}: ${schema.type ?? 'untyped'} in the schema, ${want} in the type`];
  if (Array.isArray(want)) {
    if (schema.type !== 'array' || schema.items === undefined)
      return [`${path}: ${schema.type ?? 'untyped'} in the schema, an array in the type`];
    return valueDifferences(schema.items, (want as readonly [AnyShape])[0], `${path}[]`);
  }
  if (schema.type !== 'object')
    return [`${path}: ${schema.type ?? 'untyped'} in the schema, an object in the type`];
  return shapeDifferences(schema, want, [], path);
}
