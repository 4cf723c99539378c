// WAFv2 behaviour the emulator lacks, as a fault-proxy rule: where moto answers differently from
// AWS WAF, the rule makes the emulator's state what AWS's would be.
import { DisassociateWebACLCommand, GetWebACLForResourceCommand, WAFV2Client } from '@aws-sdk/client-wafv2';
import type { FaultRule } from './awsFaultProxy.ts';
import { awsClientConfig } from './emulator.ts';

/** The ResourceArn of a WAFv2 JSON request body, if any. Pure. */
export function resourceArnOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { ResourceArn?: unknown };
    return typeof parsed.ResourceArn === 'string' ? parsed.ResourceArn : undefined;
  } catch {
    return undefined;
  }
}

/**
 * AWS WAF's AssociateWebACL *replaces* the web ACL a resource has: a resource has at most one
 * ("If the resource is already associated with a web ACL, the new association replaces it").
 * moto (5.2) instead appends the resource to the new ACL's list and keeps it on the old one's, so
 * GetWebACLForResource goes on answering the ACL created first, and a DisassociateWebACL removes one
 * entry of the first list only. This rule disassociates the resource in the emulator (unrecorded)
 * until it has no ACL, then forwards the AssociateWebACL: the emulator ends where AWS would.
 * Install it before the calls it should apply to; it answers nothing itself.
 */
export function wafv2AssociateReplaces(): FaultRule {
  return {
    service: 'wafv2',
    operation: 'AssociateWebACL',
    fault: {
      kind: 'respond',
      respond: async (call, emulator) => {
        const resource = resourceArnOf(call.body);
        if (resource === undefined) return undefined;
        const waf = new WAFV2Client(awsClientConfig(emulator));
        try {
          // One entry per earlier association at most: bounded by what the emulator holds.
          for (let i = 0; i < 100; i++) {
            const out = await waf.send(new GetWebACLForResourceCommand({ ResourceArn: resource }));
            if (out.WebACL?.ARN === undefined) break;
            await waf.send(new DisassociateWebACLCommand({ ResourceArn: resource }));
          }
        } finally {
          waf.destroy();
        }
        return undefined;
      },
    },
  };
}
