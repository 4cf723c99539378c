// A load balancer's listeners (by port) and each listener's rules (by priority) as child sets
// (runtime/childSet.ts): the listeners and rules the spec wants, in ELBv2's shape, and the plans
// that bring what AWS has to them. Pure; listeners.ts sends the calls.
import type { Action, Listener, Rule } from '@aws-sdk/client-elastic-load-balancing-v2';
import { planChildSet, planOf, type ChildSetPlan } from '../../runtime/childSet.ts';
import type { ListenerSpec, RuleSpec } from './api.ts';
import {
  defaultCertificate,
  listenerMatches,
  ruleMatches,
  sdkActions,
  sdkConditions,
  sniCertificates,
} from './desired.ts';

/**
 * A listener as `want` asks for it, in ELBv2's shape without an ARN: port, protocol, default
 * action (`actions`), the default certificate first then the SNI certificates, SSL policy. What
 * CreateListener and ModifyListener are sent, and what is remembered of a listener they made or
 * changed. Pure.
 */
export function wantedListener(want: ListenerSpec, actions: Action[]): Listener {
  const certs =
    want.certificateArn !== undefined
      ? [
          { CertificateArn: want.certificateArn, IsDefault: true },
          ...(want.additionalCertificateArns ?? []).map((arn) => ({ CertificateArn: arn, IsDefault: false })),
        ]
      : undefined;
  return {
    Port: want.port,
    Protocol: want.protocol,
    DefaultActions: actions,
    ...(certs !== undefined ? { Certificates: certs } : {}),
    ...(want.sslPolicy !== undefined ? { SslPolicy: want.sslPolicy } : {}),
  };
}

/**
 * What ModifyListener sets, from a wanted listener (see {@link wantedListener}), as
 * `listenerMatches` and `listenerBaseMatches` compare it; SNI certificates beside. Pure.
 */
export function listenerSettings(wanted: Listener): {
  protocol: string;
  certificateArn: string | undefined;
  additionalCertificateArns: string[];
  sslPolicy: string | undefined;
  actions: Action[];
} {
  return {
    protocol: wanted.Protocol ?? '',
    certificateArn: defaultCertificate(wanted),
    additionalCertificateArns: sniCertificates(wanted),
    sslPolicy: wanted.SslPolicy,
    actions: wanted.DefaultActions ?? [],
  };
}

/**
 * The changes that bring a load balancer's listeners (`have`, as described) to the spec's
 * (`want`), keyed by port, values as {@link wantedListener}: the missing listeners created, those
 * that differ updated (ModifyListener and the SNI certificates), then those on ports the spec no
 * longer has deleted — in that order (creates first: what serves keeps serving), one listener per
 * batch (CreateListener, ModifyListener and DeleteListener each take one). Every listener
 * of Skylift's load balancer is Skylift's. Ports in `held` (listeners held back for a
 * certificate, certificateHosts.ts) are left out on both sides: left as AWS has them. A listener
 * AWS lists without an ARN counts as missing; one without a port, as not there. Pure; throws
 * when a forward names a backend `tgArns` lacks (as sdkActions).
 */
export function listenerPlan(
  want: readonly ListenerSpec[],
  have: readonly Listener[],
  tgArns: ReadonlyMap<string, string>,
  held: ReadonlySet<number> = new Set(),
): ChildSetPlan<number, Listener> {
  return planOf(
    planChildSet(
      want
        .filter((w) => !held.has(w.port))
        .map((w) => [w.port, wantedListener(w, sdkActions(w.defaultAction, tgArns))] as const),
      have.flatMap((l) =>
        l.Port !== undefined && l.ListenerArn !== undefined && !held.has(l.Port)
          ? [[l.Port, { value: l, ours: true }] as const]
          : [],
      ),
      {
        limits: { perCall: 1 },
        equal: (wanted, observed) => listenerMatches(observed, listenerSettings(wanted)),
      },
    ),
  );
}

/**
 * The changes that bring one listener's rules (`have`, the default rule left out) to the spec's
 * rules of that listener (`want`), keyed by priority, values in ELBv2's shape without an ARN
 * (priority, conditions, actions): the missing ones created first, then those that differ
 * modified, then the rules no longer wanted deleted — what serves keeps serving: when computed
 * priorities shift (a MyIngressGroup member leaving from before another), a rule's routes are
 * written at their new priority before their old one goes, never the other way round — one rule
 * per batch (CreateRule, ModifyRule and DeleteRule each take one). Every rule of Skylift's listener is Skylift's. A rule without an
 * ARN counts as missing. Pure; throws when a forward names a backend `tgArns` lacks.
 */
export function listenerRulePlan(
  want: readonly RuleSpec[],
  have: readonly Rule[],
  tgArns: ReadonlyMap<string, string>,
): ChildSetPlan<number, Rule> {
  return planOf(
    planChildSet<number, Rule>(
      want.map(
        (w) =>
          [
            w.priority,
            {
              Priority: String(w.priority),
              Conditions: sdkConditions(w.hosts, w.paths, w),
              Actions: sdkActions(w.action, tgArns),
            },
          ] as const,
      ),
      have.flatMap((r) =>
        r.RuleArn !== undefined ? [[Number(r.Priority), { value: r, ours: true }] as const] : [],
      ),
      {
        limits: { perCall: 1 },
        equal: (wanted, observed) =>
          ruleMatches(observed, { conditions: wanted.Conditions ?? [], actions: wanted.Actions ?? [] }),
      },
    ),
  );
}
