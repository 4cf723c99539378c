// Every kind Skylift serves. The operator, the CLI, `skylift dev`,
// `skylift trace` and the generators iterate this list; adding a kind is a
// folder under src/kinds/ and one line here.
import { dnsRecordKind } from './dnsrecord/index.ts';
import { managedDbKind } from './manageddb/index.ts';
import type { KindModule } from './module.ts';
import type { CrdManifest } from '../apis/crd.ts';
import { teamPolicyCrd } from '../apis/teampolicy.ts';
import { admissionPolicySpec, type AdmissionPolicySpec } from '../tenancy/admission.ts';
import { myIngressKind } from './myingress/index.ts';

/** The kinds, in the order CRDs, docs and health checks are rendered. */
export const kinds: readonly KindModule[] = [dnsRecordKind, myIngressKind, managedDbKind];

/** The kind a user typed (Kind, plural, short name or plural.group; any case); undefined if none. Pure. */
export function kindNamed(word: string): KindModule | undefined {
  const w = word.toLowerCase();
  return kinds.find((k) => k.names.includes(w));
}

/** The TeamPolicy CRD with every kind's guardrail section. Pure. */
export function teamPolicyDefinition(): CrdManifest {
  return teamPolicyCrd(kinds.flatMap((k) => (k.guardrails !== undefined ? [k.guardrails] : [])));
}

/** Every CRD Skylift installs: the kinds' and TeamPolicy. Pure. */
export function allCrds(): CrdManifest[] {
  return [...kinds.map((k) => k.crd()), teamPolicyDefinition()];
}

/** A kind's ValidatingAdmissionPolicy: its resource (plural) and spec, as the chart renders it. */
export interface KindAdmissionPolicy {
  readonly resource: string;
  readonly spec: AdmissionPolicySpec;
}

/** The admission policies of the kinds that have guardrails at admission. Pure. */
export function admissionPolicies(): KindAdmissionPolicy[] {
  return kinds.flatMap((k) =>
    k.admission !== undefined
      ? [{ resource: k.type.plural, spec: admissionPolicySpec(k.type, k.admission) }]
      : [],
  );
}
