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
import { myIngressGroupKind } from './myingress/group/index.ts';

/** The kinds, in the order CRDs, docs and health checks are rendered. */
export const kinds: readonly KindModule[] = [dnsRecordKind, myIngressKind, myIngressGroupKind, managedDbKind];

/** The kind a user typed (Kind, plural, short name or plural.group; any case); undefined if none. Pure. */
export function kindNamed(word: string): KindModule | undefined {
  const w = word.toLowerCase();
  return kinds.find((k) => k.names.includes(w));
}

/**
 * The TeamPolicy CRD with the guardrail section of every kind of `registry` (default: Skylift's
 * kinds) that has one, naming those kinds in its description. Pure.
 */
export function teamPolicyDefinition(registry: readonly KindModule[] = kinds): CrdManifest {
  const guarded = registry.flatMap((k) =>
    k.guardrails !== undefined ? [{ kind: k.type.kind, section: k.guardrails }] : [],
  );
  return teamPolicyCrd(
    guarded.map((g) => g.section),
    guarded.map((g) => g.kind),
  );
}

/** Every CRD an installation of `registry` (default: Skylift's kinds) needs: the kinds' and TeamPolicy. Pure. */
export function allCrds(registry: readonly KindModule[] = kinds): CrdManifest[] {
  return [...registry.map((k) => k.crd()), teamPolicyDefinition(registry)];
}

/** A kind's ValidatingAdmissionPolicy: its resource (plural) and spec, as the chart renders it. */
export interface KindAdmissionPolicy {
  readonly resource: string;
  readonly spec: AdmissionPolicySpec;
}

/** The admission policies of the kinds of `registry` (default: Skylift's) that have guardrails at admission. Pure. */
export function admissionPolicies(registry: readonly KindModule[] = kinds): KindAdmissionPolicy[] {
  return registry.flatMap((k) =>
    k.admission !== undefined
      ? [{ resource: k.type.plural, spec: admissionPolicySpec(k.type, k.admission) }]
      : [],
  );
}
