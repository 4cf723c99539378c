// What spec.waf asks of a load balancer's web ACL, given the ACL attached and the one Skylift
// recorded (docs/myingress.md#waf). Pure: no SDK is loaded by this file.
import type { DeltaEntry } from '../../runtime/adapter.ts';
import type { MyIngressSpec } from './api.ts';
import type { MyIngressField } from './delta.ts';

/** The load balancer tag recording the web ACL Skylift associated (its ARN). */
export const wafAclTag = 'skylift.dev/waf-acl';

/** The web ACL a look found associated with the load balancer (`arn` undefined: none). */
export interface WebAclSeen {
  readonly arn: string | undefined;
}

/** What one update does about the web ACL, in this order. Empty: nothing to do. */
export interface WebAclPlan {
  /** Record this ACL in the tag (before associating it: a crash then leaves a record, never an unrecorded ACL). */
  readonly record?: string;
  /** Associate this ACL (AssociateWebACL replaces whatever is attached). */
  readonly associate?: string;
  /** Disassociate the attached ACL: it is the one Skylift recorded. */
  readonly disassociate?: true;
  /** Drop the record (after a disassociation, or when the ACL is no longer Skylift's to remove). */
  readonly dropRecord?: true;
}

/** Whether a look must read the load balancer's web ACL (GetWebACLForResource). Pure. */
export function webAclNeeded(spec: MyIngressSpec, tags: Readonly<Record<string, string>>): boolean {
  if (spec.waf?.policy === 'LeaveAlone') return false;
  return spec.waf?.webAclArn !== undefined || tags[wafAclTag] !== undefined;
}

/**
 * What to do about the web ACL, from the spec, the ACL Skylift recorded (the tag) and the one
 * attached (`attached`: undefined when not read). LeaveAlone only drops the record. With an ARN:
 * record it and associate it where either differs. Without: disassociate only when the attached ACL
 * is the recorded one, and drop the record in any case; an ACL someone else attached stays. Pure.
 */
export function webAclPlan(
  spec: MyIngressSpec,
  recorded: string | undefined,
  attached: WebAclSeen | undefined,
): WebAclPlan {
  if (spec.waf?.policy === 'LeaveAlone') return recorded !== undefined ? { dropRecord: true } : {};
  const want = spec.waf?.webAclArn;
  if (want !== undefined) {
    return {
      ...(recorded !== want ? { record: want } : {}),
      ...(attached !== undefined && attached.arn !== want ? { associate: want } : {}),
    };
  }
  if (recorded === undefined || attached === undefined) return {};
  return attached.arn === recorded ? { disassociate: true, dropRecord: true } : { dropRecord: true };
}

/** The delta entries of a plan (none when it is empty). Pure. */
export function webAclDelta(
  plan: WebAclPlan,
  attached: WebAclSeen | undefined,
  recorded: string | undefined,
): DeltaEntry<MyIngressField>[] {
  const change =
    plan.associate !== undefined
      ? `web ACL ${attached?.arn ?? 'none'} → ${plan.associate}`
      : plan.disassociate === true
        ? `web ACL ${recorded ?? ''} (associated by Skylift) no longer wanted`
        : plan.record !== undefined
          ? `web ACL ${plan.record} not recorded as Skylift's`
          : plan.dropRecord === true
            ? `record of web ACL ${recorded ?? ''} no longer Skylift's`
            : undefined;
  return change !== undefined ? [{ field: 'webAcl', change }] : [];
}
