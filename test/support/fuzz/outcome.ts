// Applying generated CRs to the apiserver and judging where each one ended:
// rejected at admission, Ready, or Synced=False with a reason a user can act
// on. Anything else (no status, retrying forever, a vague message) is a bug.
import { KubeApiError, type KubeClient } from '../../../src/runtime/kube/client.ts';
import { resourcePath, type ResourceType } from '../../../src/apis/meta.ts';
import type { Condition } from '../../../src/apis/managed.ts';
import type { FuzzCase } from './mutate.ts';

/** Seed and batch size of a fuzz run: SKYLIFT_FUZZ_SEED / SKYLIFT_FUZZ_RUNS override the defaults. */
export function fuzzSettings(defaultRuns: number): { seed: number; runs: number } {
  const seedText = process.env.SKYLIFT_FUZZ_SEED;
  const runsText = process.env.SKYLIFT_FUZZ_RUNS;
  const seed = seedText !== undefined && seedText !== '' ? Number(seedText) : 20_260_611;
  const runs = runsText !== undefined && runsText !== '' ? Number(runsText) : defaultRuns;
  if (!Number.isSafeInteger(seed))
    throw new Error(`SKYLIFT_FUZZ_SEED must be an integer, got ${seedText ?? ''}`);
  if (!Number.isSafeInteger(runs) || runs < 1)
    throw new Error(`SKYLIFT_FUZZ_RUNS must be a positive integer, got ${runsText ?? ''}`);
  return { seed, runs };
}

/** What admission said about one object. */
export type Admission =
  | { readonly admitted: true }
  | { readonly admitted: false; readonly status: number; readonly reason: string; readonly message: string };

/**
 * Creates one object of `type` in `namespace` with `spec`. With `strict`,
 * unknown fields are an error (as `kubectl apply` asks) instead of being
 * pruned. Returns the apiserver's verdict; other failures (network, 5xx) throw.
 */
export async function admit(
  client: KubeClient,
  type: ResourceType,
  namespace: string,
  name: string,
  spec: unknown,
  strict: boolean,
): Promise<Admission> {
  try {
    await client.request('POST', resourcePath(type, { namespace }), {
      body: {
        apiVersion: `${type.group}/${type.version}`,
        kind: type.kind,
        metadata: { name, namespace },
        spec,
      },
      query: { fieldValidation: strict ? 'Strict' : 'Ignore' },
    });
    return { admitted: true };
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode >= 400 && err.statusCode < 500) {
      return { admitted: false, status: err.statusCode, reason: err.reason, message: err.message };
    }
    throw err;
  }
}

/**
 * A field path the apiserver's rejection names: `spec.x`, `spec.x[0].y`,
 * `[spec.x`, `spec:`, or an unknown field `spec.<any key, even blank>` (strict decoding).
 */
export const namesAField = /(^|[^A-Za-z0-9])spec(\.|\[|:)/;

/** Where an admitted object ended. */
export type Settled =
  | { readonly state: 'ready' }
  | { readonly state: 'terminal' | 'conflict'; readonly message: string }
  /**
   * Reconciled (Synced=True) but not Ready until a person creates what the
   * spec refers to in Kubernetes: a MyIngress backend Service or its port.
   * Whether that is really absent is for the kind's own check to confirm.
   */
  | { readonly state: 'missingBackend'; readonly reason: string; readonly message: string };

/** Ready reasons that say a referenced Kubernetes object is missing (see {@link Settled}). */
export const missingBackendReasons: readonly string[] = ['ServiceNotFound', 'ServicePortNotFound'];

/** The object as the fuzz test reads it: its spec as stored (defaults applied, unknown fields pruned) and status. */
export interface ObservedStatus {
  readonly metadata: { readonly name: string; readonly generation?: number };
  readonly spec?: unknown;
  readonly status?: { readonly conditions?: readonly Condition[]; readonly observedGeneration?: number };
}

/**
 * Whether an object has settled: Ready=True; Synced=False with reason
 * Terminal or Conflict; or Synced=True with Ready=False for a missing
 * backend ({@link missingBackendReasons}) — each for the object's current
 * generation. Anything else (no status yet, Creating, retrying an AWS error)
 * is `undefined`. Pure.
 */
export function settledState(obj: ObservedStatus): Settled | undefined {
  const conds = obj.status?.conditions ?? [];
  const gen = obj.metadata.generation;
  const current = (c: Condition): boolean => gen === undefined || c.observedGeneration === gen;
  const ready = conds.find((c) => c.type === 'Ready');
  const synced = conds.find((c) => c.type === 'Synced');
  if (ready?.status === 'True' && current(ready)) return { state: 'ready' };
  if (synced?.status === 'False' && current(synced)) {
    if (synced.reason === 'Terminal') return { state: 'terminal', message: synced.message };
    if (synced.reason === 'Conflict') return { state: 'conflict', message: synced.message };
  }
  if (
    synced?.status === 'True' &&
    current(synced) &&
    ready?.status === 'False' &&
    current(ready) &&
    missingBackendReasons.includes(ready.reason)
  )
    return { state: 'missingBackend', reason: ready.reason, message: ready.message };
  return undefined;
}

/**
 * `message` without the JSON-quoted values in it ("…"): a value quoted from
 * the spec is the user's (a Service named "NaN"), not a programming artefact
 * for {@link unhelpfulMessage} to find. Pure.
 */
export function withoutQuotedValues(message: string): string {
  return message.replace(/"(?:[^"\\]|\\.)*"/g, '""');
}

/**
 * Why a condition message would not help a user: empty, too short to say
 * anything, or leaking a programming artefact instead of a sentence.
 * Returns undefined for a usable message. Pure.
 */
export function unhelpfulMessage(message: string): string | undefined {
  if (message.trim().length < 12) return 'empty or too short';
  const artefacts = [
    /\[object Object\]/,
    /\bundefined\b/,
    /\bNaN\b/,
    /at .*\.ts:\d+/,
    /^Error$/,
    /TypeError|ReferenceError/,
  ];
  const hit = artefacts.find((re) => re.test(message));
  return hit === undefined ? undefined : `contains ${String(hit)}`;
}

/** One line per condition, for failure reports. Pure. */
export function describeStatus(obj: ObservedStatus | undefined): string {
  if (obj === undefined) return 'object not found';
  const conds = obj.status?.conditions ?? [];
  if (conds.length === 0) return 'no status conditions';
  return conds
    .map((c) => `${c.type}=${c.status} ${c.reason} (gen ${String(c.observedGeneration)}): ${c.message}`)
    .join('; ');
}

/** A generated case as a short, readable report line (huge values truncated). Pure. */
export function describeCase(name: string, c: FuzzCase): string {
  const json = JSON.stringify(c.spec, (_k, v: unknown) =>
    typeof v === 'string' && v.length > 120 ? `${v.slice(0, 60)}…(${v.length} chars)` : v,
  );
  const note = c.note !== undefined ? ` (${c.note})` : '';
  return `${name} [${c.intent}${note}] spec=${json.length > 1500 ? `${json.slice(0, 1500)}…` : json}`;
}
