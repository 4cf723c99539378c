// Every spec field of every kind is in the kind's field contract (src/apis/fieldContract.ts): fixed
// at create, applied in AWS, or Kubernetes-only — never accepted and ignored. The test walks the
// generated CRD schemas, so a new field without a contract entry fails here, naming it; a field the
// contract calls fixed must carry the CEL rule that refuses its change, and a field with such a
// rule must be called fixed.
import { describe, expect, it } from 'vitest';
import type { FieldContract, FieldTreatment } from '../../src/apis/fieldContract.ts';
import type { Schema } from '../../src/apis/schema.ts';
import { teamPolicyFieldContract } from '../../src/apis/teampolicy.ts';
import { teamPolicyDefinition } from '../../src/kinds/registry.ts';
import { kindsWithQueue } from '../support/queueKind/registry.ts';

/** One node of a spec schema, by its contract path. */
interface Node {
  readonly path: string;
  readonly schema: Schema;
  readonly parent?: Node;
  readonly name: string;
}

/** Every node below `spec`, with list items as `[]`; maps (additionalProperties) are leaves. Pure. */
function nodes(schema: Schema, path = '', parent?: Node, name = ''): Node[] {
  const here: Node[] = path === '' ? [] : [{ path, schema, ...(parent ? { parent } : {}), name }];
  const self = here[0];
  const props = Object.entries(schema.properties ?? {}).flatMap(([k, v]) =>
    nodes(v, path === '' ? k : `${path}.${k}`, self ?? { path: '', schema, name: '' }, k),
  );
  const items =
    schema.items?.properties !== undefined
      ? nodes(schema.items, `${path}[]`, self, `${name}[]`).map((n) => (n.path === `${path}[]` ? n : n))
      : [];
  return [...here, ...props, ...items];
}

/** The contract entry that covers `path`: the longest key that is the path or one of its ancestors. Pure. */
function coveringKey(contract: FieldContract, path: string): string | undefined {
  return Object.keys(contract)
    .filter((k) => path === k || path.startsWith(`${k}.`) || path.startsWith(`${k}[]`))
    .sort((a, b) => b.length - a.length)[0];
}

const isLeaf = (n: Node): boolean =>
  n.schema.properties === undefined && n.schema.items?.properties === undefined;

/** Whether the node's own rules refuse any change (`self == oldSelf`). Pure. */
const immutableRule = (n: Node): boolean =>
  (n.schema['x-kubernetes-validations'] ?? []).some((r) => r.rule === 'self == oldSelf');

/** Whether the parent's rules keep the field as it was at create (createOnly). Pure. */
const createOnlyRule = (n: Node): boolean =>
  (n.parent?.schema['x-kubernetes-validations'] ?? []).some((r) =>
    r.rule.startsWith(`has(self.${n.name}) == has(oldSelf.${n.name})`),
  );

const kindOf = (t: FieldTreatment): string => Object.keys(t)[0] ?? '';

/** Every kind Skylift serves (the Queue test kind with them) and TeamPolicy, with their spec schema. */
const cases = [
  ...kindsWithQueue.map((k) => {
    const spec = k.crd().spec.versions[0]?.schema.openAPIV3Schema.properties?.spec;
    return { kind: k.type.kind, spec, contract: k.fieldContract };
  }),
  {
    kind: 'TeamPolicy',
    spec: teamPolicyDefinition().spec.versions[0]?.schema.openAPIV3Schema.properties?.spec,
    contract: teamPolicyFieldContract,
  },
];

describe.each(cases)('the field contract of $kind', ({ spec, contract }) => {
  if (spec === undefined) throw new Error('no spec schema');
  const all = nodes(spec);

  it('covers every spec field', () => {
    const uncovered = all.filter(isLeaf).filter((n) => coveringKey(contract, n.path) === undefined);
    expect(uncovered.map((n) => n.path)).toEqual([]);
  });

  it('names only fields the schema has, each with a text that says what happens', () => {
    const paths = new Set(all.map((n) => n.path));
    expect(Object.keys(contract).filter((k) => !paths.has(k))).toEqual([]);
    for (const t of Object.values(contract)) expect(Object.values(t)[0]).toMatch(/\S{3}/);
  });

  it('calls a field fixed exactly when admission refuses its change', () => {
    const fixedInContract = Object.entries(contract)
      .filter(([, t]) => kindOf(t) === 'fixed')
      .map(([k]) => k)
      .sort();
    const refused = all
      .filter((n) => immutableRule(n) || createOnlyRule(n))
      .map((n) => n.path)
      .sort();
    expect(fixedInContract).toEqual(refused);
  });
});

describe('the field contract check itself', () => {
  const schema: Schema = {
    type: 'object',
    description: 'spec',
    properties: {
      a: {
        type: 'string',
        description: 'a',
        'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'm' }],
      },
      list: {
        type: 'array',
        description: 'l',
        items: { type: 'object', description: 'i', properties: { x: { type: 'integer', description: 'x' } } },
      },
    },
  };

  it('finds a field no entry covers, and list items by []', () => {
    const all = nodes(schema);
    expect(all.map((n) => n.path)).toEqual(['a', 'list', 'list[]', 'list[].x']);
    expect(coveringKey({ a: { fixed: 'x' } }, 'list[].x')).toBeUndefined();
    expect(coveringKey({ list: { applied: 'x' } }, 'list[].x')).toBe('list');
    expect(coveringKey({ list: { applied: 'x' }, 'list[].x': { kubernetes: 'y' } }, 'list[].x')).toBe(
      'list[].x',
    );
    expect(immutableRule(all[0] as Node)).toBe(true);
    expect(immutableRule(all[3] as Node)).toBe(false);
  });
});
