// Which TeamPolicy serves a namespace: pure functions over the policies and the namespace's labels.
import type { LabelSelector, TeamPolicy } from '../apis/teampolicy.ts';

/** A namespace as selection sees it. */
export interface NamespaceFacts {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** What serves a namespace. */
export type Tenancy =
  /** No TeamPolicy exists: the operator's own identity and region, no guardrails (one team). */
  | { readonly kind: 'unrestricted' }
  | { readonly kind: 'policy'; readonly policy: TeamPolicy }
  /** Policies exist but none (or more than one) selects the namespace: nothing may be done. */
  | { readonly kind: 'refused'; readonly message: string };

/** True when `selector` matches `labels` (metav1.LabelSelector semantics; an empty selector matches all). Pure. */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const r of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, r.key);
    const value = labels[r.key];
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In':
        if (!has || value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (has && value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** True when the policy selects the namespace (by name or by its selector). Pure. */
export function policySelects(policy: TeamPolicy, ns: NamespaceFacts): boolean {
  const sel = policy.spec.namespaces;
  if ((sel.names ?? []).includes(ns.name)) return true;
  return sel.selector !== undefined && selectorMatches(sel.selector, ns.labels);
}

/** When a namespace no policy selects is refused even while no policy exists, and why. */
export interface Requirement {
  /** True: the installation serves teams, and no policy means no namespace is served. */
  readonly required?: boolean;
  /** Why, in the refusal's words (default: the --team-policy-required flag). */
  readonly because?: string;
}

/**
 * The tenancy of a namespace among all policies: unrestricted when there are none (unless
 * `required`: the installation serves teams, and no policy means no namespace is served), the one
 * policy that selects it, or refused (with a message naming what to fix) when none or several do.
 * Pure.
 */
export function tenancyOf(
  ns: NamespaceFacts,
  policies: readonly TeamPolicy[],
  opts: Requirement = {},
): Tenancy {
  if (policies.length === 0 && opts.required === true)
    return {
      kind: 'refused',
      message: `namespace ${ns.name} is not selected by any TeamPolicy, and this installation serves only namespaces a TeamPolicy selects (${opts.because ?? '--team-policy-required'}), also while none exists: ask the platform team to add ${ns.name} to a TeamPolicy's spec.namespaces`,
    };
  if (policies.length === 0) return { kind: 'unrestricted' };
  const selecting = policies.filter((p) => policySelects(p, ns));
  if (selecting.length === 1 && selecting[0] !== undefined) return { kind: 'policy', policy: selecting[0] };
  if (selecting.length === 0) {
    // No policy's name: they are the platform team's, and other teams' (their status lists them).
    return {
      kind: 'refused',
      message: `namespace ${ns.name} is not selected by any TeamPolicy; once a TeamPolicy exists Skylift serves only the namespaces one selects: ask the platform team to add ${ns.name} to a TeamPolicy's spec.namespaces`,
    };
  }
  const names = selecting.map((p) => p.metadata.name).sort();
  return {
    kind: 'refused',
    message: `namespace ${ns.name} is selected by ${names.length} TeamPolicies (${names.join(', ')}); a namespace must have exactly one: remove it from all but one policy's spec.namespaces`,
  };
}

/** For each policy, the namespaces it selects and the other policies it shares any with. Pure. */
export function policySelections(
  policies: readonly TeamPolicy[],
  namespaces: readonly NamespaceFacts[],
): Map<string, { readonly namespaces: string[]; readonly overlaps: Map<string, string[]> }> {
  const out = new Map<string, { namespaces: string[]; overlaps: Map<string, string[]> }>();
  const byNamespace = new Map<string, string[]>();
  for (const p of policies) {
    const selected = namespaces
      .filter((ns) => policySelects(p, ns))
      .map((ns) => ns.name)
      .sort();
    out.set(p.metadata.name, { namespaces: selected, overlaps: new Map() });
    for (const ns of selected) byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), p.metadata.name]);
  }
  for (const [ns, owners] of byNamespace) {
    if (owners.length < 2) continue;
    for (const p of owners) {
      const entry = out.get(p);
      if (entry === undefined) continue;
      for (const other of owners) {
        if (other === p) continue;
        entry.overlaps.set(other, [...(entry.overlaps.get(other) ?? []), ns]);
      }
    }
  }
  return out;
}
