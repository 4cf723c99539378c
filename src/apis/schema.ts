/**
 * A tiny builder for the OpenAPI v3 schemas of CRDs. Every node requires a
 * description, so `kubectl explain` documents every field; CEL rules ride
 * along as `x-kubernetes-validations`. Plain data, no side effects.
 */

/** A CEL validation rule. */
export interface CelRule {
  readonly rule: string;
  readonly message: string;
  /** A CEL expression computing the message (the apiserver falls back to `message` if it fails). */
  readonly messageExpression?: string;
  readonly reason?:
    'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  readonly fieldPath?: string;
}

/** An OpenAPI v3 schema node as CRDs accept it. */
export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: (string | number)[];
  default?: unknown;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  'x-kubernetes-validations'?: CelRule[];
  additionalProperties?: Schema;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
}

type Extra = Omit<Schema, 'type' | 'description' | 'properties' | 'items'>;

/** A string-to-string map (tags, labels). */
export const stringMap = (description: string, extra: Extra = {}): Schema => ({
  type: 'object',
  description,
  additionalProperties: { type: 'string', description: 'A value.', maxLength: 256 },
  ...extra,
});

export const str = (description: string, extra: Extra = {}): Schema => ({
  type: 'string',
  description,
  ...extra,
});
export const int = (description: string, extra: Extra = {}): Schema => ({
  type: 'integer',
  description,
  ...extra,
});
export const bool = (description: string, extra: Extra = {}): Schema => ({
  type: 'boolean',
  description,
  ...extra,
});
export const arr = (description: string, items: Schema, extra: Extra = {}): Schema => ({
  type: 'array',
  description,
  items,
  ...extra,
});
export const obj = (description: string, properties: Record<string, Schema>, extra: Extra = {}): Schema => ({
  type: 'object',
  description,
  properties,
  ...extra,
});

/** A rule that a field, once set, never changes (CEL transition rule). */
export const immutable = (what: string): CelRule => ({
  rule: 'self == oldSelf',
  message: `${what} is immutable`,
});

/**
 * A rule on an object that its field `field`, set or not at create, stays so
 * and never changes (a field-level `self == oldSelf` cannot see it added or
 * removed). `why` completes the message with what to do instead.
 */
export const createOnly = (field: string, why: string): CelRule => ({
  rule: `has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})`,
  message: `spec.${field} cannot be set, changed or removed after create: ${why}`,
});

/** Every property of a schema tree that lacks a description (for the test that keeps `kubectl explain` useful). Pure. */
export function undocumented(schema: Schema, path = ''): string[] {
  const here = schema.description.trim() === '' ? [path || '<root>'] : [];
  const props = Object.entries(schema.properties ?? {}).flatMap(([k, v]) => undocumented(v, `${path}.${k}`));
  const items = schema.items !== undefined ? undocumented(schema.items, `${path}[]`) : [];
  return [...here, ...props, ...items];
}
