// The generated half of the field contract check (src/apis/fieldContract.ts): for a kind, one
// probe per field the contract says is applied in AWS changes it after create (and back), waits
// for Ready and Synced at the new generation, and reads AWS at once: settled means applied. One probe
// per fixed field checks that the apiserver refuses the change. Which fields need a probe comes
// from the contract, so a new applied or fixed field without one fails `probesCover`.
import type { FieldContract } from '../../src/apis/fieldContract.ts';
import type { Condition, ManagedObject } from '../../src/apis/managed.ts';
import { resourcePath, type ResourceType } from '../../src/apis/meta.ts';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../dev/wait.ts';
import { KubeApiError, type KubeClient } from '../../src/runtime/kube/client.ts';
import { readObject } from './kube.ts';

/** One change of a field after create: a merge patch of spec, and what AWS must show once Synced. */
export interface ProbeStep {
  readonly patch: Record<string, unknown>;
  readonly aws: unknown;
}

/** How a probe shows that a field the contract calls applied reaches AWS. */
export interface FieldProbe {
  /** The contract key it proves. */
  readonly field: string;
  /** What AWS shows for the field before the first step (the object as created). */
  readonly before: unknown;
  /** The changes, in order (the last one usually puts the field back). */
  readonly steps: readonly ProbeStep[];
  /** Reads the field's value from AWS (the emulator), in the shape of `before` and `aws`. */
  readonly read: () => Promise<unknown>;
}

/** A change of a field the contract calls fixed: the apiserver must refuse it. */
export interface FixedProbe {
  readonly field: string;
  readonly patch: Record<string, unknown>;
}

/** The contract keys of a treatment (`applied`, `fixed`). Pure. */
export function contractKeys(contract: FieldContract, treatment: 'applied' | 'fixed'): string[] {
  return Object.entries(contract)
    .filter(([, t]) => treatment in t)
    .map(([k]) => k)
    .sort();
}

/** The applied and fixed fields that have no probe (empty when every one has). Pure. */
export function missingProbes(
  contract: FieldContract,
  probes: readonly FieldProbe[],
  fixed: readonly FixedProbe[],
): string[] {
  const proved = new Set([...probes.map((p) => p.field), ...fixed.map((p) => p.field)]);
  return [...contractKeys(contract, 'applied'), ...contractKeys(contract, 'fixed')].filter(
    (k) => !proved.has(k),
  );
}

/**
 * Waits until the object is Ready and Synced, both for its current generation (Synced alone may
 * mean a change was handed to AWS, e.g. queued in a Route 53 batch); returns the object.
 */
export async function waitSettledAtGeneration<T extends ManagedObject>(
  admin: KubeClient,
  type: ResourceType,
  ns: string,
  name: string,
  what: string,
): Promise<T> {
  return waitFor(
    async () => {
      const o = await readObject<T>(admin, type, ns, name);
      const settled = (type: string): boolean => {
        const c: Condition | undefined = o?.status?.conditions?.find((x) => x.type === type);
        return c?.status === 'True' && c.observedGeneration === o?.metadata.generation;
      };
      return settled('Ready') && settled('Synced') ? o : undefined;
    },
    { timeoutMs: 60_000, description: `${ns}/${name} Ready and Synced at its generation after ${what}` },
  );
}

/**
 * Runs each probe against the object `name` (created and Synced): checks AWS shows `before`,
 * then for each step patches the spec, waits for Ready and Synced at the new generation and checks
 * AWS shows the step's value at once.
 */
export async function runProbe(
  admin: KubeClient,
  type: ResourceType,
  ns: string,
  name: string,
  probe: FieldProbe,
  check: (field: string, got: unknown, want: unknown) => void,
): Promise<void> {
  check(`${probe.field} as created`, await probe.read(), probe.before);
  for (const [i, step] of probe.steps.entries()) {
    await admin.patch(resourcePath(type, { namespace: ns, name }), { spec: step.patch }, 'merge');
    await waitSettledAtGeneration(admin, type, ns, name, `${probe.field} step ${i + 1}`);
    check(`${probe.field} after ${JSON.stringify(step.patch)}`, await probe.read(), step.aws);
  }
}

/** The apiserver's refusal of a fixed field's change: its message, or undefined when it was accepted. */
export async function refusal(
  admin: KubeClient,
  type: ResourceType,
  ns: string,
  name: string,
  probe: FixedProbe,
): Promise<string | undefined> {
  try {
    await admin.patch(resourcePath(type, { namespace: ns, name }), { spec: probe.patch }, 'merge');
    return undefined;
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 422) return err.message;
    throw err;
  }
}

/** What {@link describeFieldContract} needs of one kind's probe file. */
export interface FieldContractSuite {
  /** The kind's name, as the describe block says it. */
  readonly kind: string;
  /** The AWS service the probes read, as the test names say it (RDS, Route 53, ELBv2). */
  readonly service: string;
  readonly type: ResourceType;
  readonly contract: FieldContract;
  /** The probes, built when called (they may read what beforeAll made). */
  readonly probes: () => readonly FieldProbe[];
  readonly fixed: readonly FixedProbe[];
  /** The probed object, once beforeAll has made it. */
  readonly object: () => { readonly admin: KubeClient; readonly ns: string; readonly name: string };
  /** What the apiserver's refusal of a fixed field says. */
  readonly refused: RegExp;
}

/**
 * The three tests every kind's probe file runs: every applied or fixed field has a probe, every
 * applied field reaches AWS once settled, every fixed field's change is refused.
 */
export function describeFieldContract(s: FieldContractSuite): void {
  describe(`${s.kind} field contract`, () => {
    it('has a probe for every field it says is applied in AWS or fixed at create', () => {
      expect(missingProbes(s.contract, s.probes(), s.fixed)).toEqual([]);
    });

    it.each(s.probes().map((p) => ({ field: p.field })))(
      `$field: changed after create, ${s.service} shows it once Ready and Synced at its generation`,
      async ({ field }) => {
        const p = s.probes().find((x) => x.field === field);
        if (p === undefined) throw new Error(field);
        const { admin, ns, name } = s.object();
        await runProbe(admin, s.type, ns, name, p, (what, got, want) => {
          expect(got, what).toEqual(want);
        });
      },
    );

    it.each(s.fixed)('$field: a change after create is refused by the apiserver', async (p) => {
      const { admin, ns, name } = s.object();
      expect(await refusal(admin, s.type, ns, name, p)).toMatch(s.refused);
    });
  });
}
