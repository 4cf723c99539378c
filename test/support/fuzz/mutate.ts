// Turns a valid spec into a borderline or invalid one: a few edits at chosen
// paths (set a hostile value, delete a field, add an unknown field). Keeping
// most of the spec valid lets an input get past the first schema check and
// reach the deeper ones, the operator and AWS.
import fc from 'fast-check';
import { hostileKey, hostileValue } from './hostile.ts';

/** One edit to a JSON document. `path` segments are object keys or array indexes. */
export type Mutation =
  | { readonly op: 'set'; readonly path: readonly (string | number)[]; readonly value: unknown }
  | { readonly op: 'delete'; readonly path: readonly (string | number)[] };

/** A generated CR spec and how it was made. */
export interface FuzzCase {
  /** `valid` specs are built only from values the API documents as allowed; `hostile` ones were mutated. */
  readonly intent: 'valid' | 'hostile';
  readonly spec: unknown;
  /** The edits applied to the valid base (empty for valid cases), for the failure report. */
  readonly mutations: readonly Mutation[];
  /** For pinned cases: why the case is always tried (a bug it found, a category it guarantees). */
  readonly note?: string;
  /** For pinned cases whose fate is known: where the object must end. */
  readonly expected?: 'rejected' | 'ready' | 'terminal' | 'conflict' | 'missingBackend';
}

/** A hand-written hostile case, tried in every run whatever the seed. */
export function pinned(
  base: Record<string, unknown>,
  note: string,
  edits: readonly Mutation[],
  expected?: FuzzCase['expected'],
): FuzzCase {
  return {
    intent: 'hostile',
    spec: applyMutations(base, edits),
    mutations: edits,
    note,
    ...(expected !== undefined ? { expected } : {}),
  };
}

type Json = Record<string, unknown> | unknown[];

function isContainer(v: unknown): v is Json {
  return typeof v === 'object' && v !== null;
}

/**
 * Applies mutations to a deep copy of `doc` and returns it. Intermediate
 * containers are created (or replace scalars) as needed, so any path can be
 * set; deleting a missing path does nothing. Pure.
 */
export function applyMutations(doc: unknown, mutations: readonly Mutation[]): unknown {
  const root = structuredClone<unknown>(doc);
  const holder: Record<string, unknown> = { root };
  for (const m of mutations) {
    let parent: Json = holder;
    const path = ['root', ...m.path];
    for (let i = 0; i < path.length - 1; i++) {
      const key = path[i] as string | number;
      const next: unknown = (parent as Record<string | number, unknown>)[key];
      if (isContainer(next)) {
        parent = next;
        continue;
      }
      if (m.op === 'delete') {
        parent = [];
        break;
      }
      const created: Json = typeof path[i + 1] === 'number' ? [] : {};
      (parent as Record<string | number, unknown>)[key] = created;
      parent = created;
    }
    const last = path[path.length - 1] as string | number;
    if (m.op === 'set') {
      if (Array.isArray(parent) && typeof last === 'number' && last > parent.length) parent.push(m.value);
      else (parent as Record<string | number, unknown>)[last] = m.value;
    } else if (Array.isArray(parent) && typeof last === 'number') {
      parent.splice(last, 1);
    } else {
      // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- the key is generated on purpose
      delete (parent as Record<string | number, unknown>)[last];
    }
  }
  return holder.root;
}

/**
 * Mutations at the given paths (the fields of one kind worth attacking):
 * mostly hostile values, sometimes deletions, sometimes an unknown extra
 * field or a hostile map key. `mapPaths` name string maps (tags, selectors).
 */
export function mutations(
  paths: readonly (readonly (string | number)[])[],
  mapPaths: readonly (readonly string[])[],
): fc.Arbitrary<Mutation[]> {
  const mapKeys: fc.Arbitrary<Mutation>[] =
    mapPaths.length === 0
      ? []
      : [
          fc
            .tuple(fc.constantFrom(...mapPaths), hostileKey, fc.oneof(hostileValue, fc.constant('v')))
            .map(([at, key, value]): Mutation => ({ op: 'set', path: [...at, key], value })),
        ];
  const one: fc.Arbitrary<Mutation> = fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(fc.constantFrom(...paths), hostileValue)
        .map(([path, value]): Mutation => ({ op: 'set', path, value })),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...paths).map((path): Mutation => ({ op: 'delete', path })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom<readonly (string | number)[]>([], ...paths.slice(0, 3)),
          hostileKey,
          hostileValue,
        )
        .map(([at, key, value]): Mutation => ({ op: 'set', path: [...at.slice(0, -1), key], value })),
    },
    ...mapKeys.map((arbitrary) => ({ weight: 2, arbitrary })),
  );
  return fc.array(one, { minLength: 1, maxLength: 3 });
}

/**
 * Cases for one kind: `valid` specs as they are (about a quarter), random
 * mutations at `paths`/`mapPaths` (half), and the kind's `targeted` edits
 * (a quarter), which put hostile payloads where the schema lets free text
 * through, so that they reach the operator and AWS.
 */
export function fuzzCases(
  valid: fc.Arbitrary<Record<string, unknown>>,
  paths: readonly (readonly (string | number)[])[],
  mapPaths: readonly (readonly string[])[],
  targeted: fc.Arbitrary<Mutation[]>,
): fc.Arbitrary<FuzzCase> {
  const mutated = (edits: fc.Arbitrary<Mutation[]>): fc.Arbitrary<FuzzCase> =>
    fc
      .tuple(valid, edits)
      .map(([base, ms]): FuzzCase => ({ intent: 'hostile', spec: applyMutations(base, ms), mutations: ms }));
  return fc.oneof(
    { weight: 1, arbitrary: valid.map((spec): FuzzCase => ({ intent: 'valid', spec, mutations: [] })) },
    { weight: 2, arbitrary: mutated(mutations(paths, mapPaths)) },
    { weight: 1, arbitrary: mutated(targeted) },
  );
}
