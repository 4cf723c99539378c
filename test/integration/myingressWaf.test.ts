// MyIngress spec.waf on the real apiserver and moto (through the fault proxy, with the rule that
// makes moto's AssociateWebACL replace an attached ACL as AWS does: dev/wafv2Fidelity.ts). Skylift
// associates, replaces and disassociates the ACL it was asked for, puts it back when it was removed
// or replaced by hand, and never removes an ACL someone else associated.
import { randomBytes } from 'node:crypto';
import { EC2Client } from '@aws-sdk/client-ec2';
import { vpcWithTwoSubnets } from '../support/vpc.ts';
import { DescribeTagsCommand, ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import {
  AssociateWebACLCommand,
  CreateWebACLCommand,
  DisassociateWebACLCommand,
  GetWebACLForResourceCommand,
  WAFV2Client,
} from '@aws-sdk/client-wafv2';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { applyTeamPolicy, deleteTeamPolicies, startTenants } from '../../dev/teamPolicies.ts';
import { waitFor } from '../../dev/wait.ts';
import { wafv2AssociateReplaces } from '../../dev/wafv2Fidelity.ts';
import type { Condition } from '../../src/apis/managed.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType, type MyIngress, type MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import type { MyIngressSettings } from '../../src/kinds/myingress/settings.ts';
import { wafAclTag } from '../../src/kinds/myingress/webAclPlan.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { TenantDirectory } from '../../src/tenancy/directory.ts';
import type { RunningController } from '../support/controllers.ts';
import { waitSettledAtGeneration } from '../support/fieldProbes.ts';
import { counterValue } from '../support/gadgetController.ts';
import { eventsFor, kubeClient, readObject } from '../support/kube.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import {
  createMyIngress,
  myIngressReconciles,
  patchMyIngressSpec,
  serveMyIngressNamespace,
} from '../support/myingressObjects.ts';

const group = 'integration-myingress-waf';
let admin: KubeClient;
let proxy: AwsFaultProxy;
let elb: ElasticLoadBalancingV2Client;
let waf: WAFV2Client;
let tenants: TenantDirectory;
let subnets: string[];
/** Three REGIONAL web ACLs: a, b and c (moto wants names unique in the account). */
const acls: string[] = [];
const running: RunningController[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
  proxy.inject(wafv2AssociateReplaces());
  tenants = await startTenants(admin, group);
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  elb = new ElasticLoadBalancingV2Client(direct);
  waf = new WAFV2Client(direct);
  const ec2 = new EC2Client(direct);
  subnets = (await vpcWithTwoSubnets(ec2, 50)).subnets;
  const suffix = randomBytes(3).toString('hex');
  for (const n of ['a', 'b', 'c']) {
    const name = `skylift-waf-${n}-${suffix}`;
    const out = await waf.send(
      new CreateWebACLCommand({
        Name: name,
        Scope: 'REGIONAL',
        DefaultAction: { Allow: {} },
        VisibilityConfig: {
          SampledRequestsEnabled: false,
          CloudWatchMetricsEnabled: false,
          MetricName: name,
        },
      }),
    );
    acls.push(out.Summary?.ARN ?? '');
  }
});
afterAll(async () => {
  await deleteTeamPolicies(admin, group);
  await tenants.stop();
  await proxy.stop();
});
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
  await deleteTeamPolicies(admin, group);
});

const aclA = (): string => acls[0] ?? '';
const aclB = (): string => acls[1] ?? '';
const aclC = (): string => acls[2] ?? '';

/** A namespace served by a MyIngress controller through the proxy. */
async function setup(
  prefix: string,
  opts: { settings?: Partial<MyIngressSettings>; resyncPeriod?: string; teams?: boolean } = {},
): Promise<{ ns: string; controller: RunningController }> {
  const served = await serveMyIngressNamespace(admin, prefix, {
    endpoint: proxy.endpoint,
    ...(opts.settings !== undefined ? { settings: opts.settings } : {}),
    ...(opts.resyncPeriod !== undefined ? { resyncPeriod: opts.resyncPeriod } : {}),
    ...(opts.teams === true ? { tenants } : {}),
  });
  running.push(served.controller);
  return served;
}

const spec = (waf?: MyIngressSpec['waf']): MyIngressSpec => ({
  subnets,
  scheme: 'internal',
  listeners: [{ port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 200 } } }],
  ...(waf !== undefined ? { waf } : {}),
});

const create = (ns: string, name: string, s: MyIngressSpec): Promise<MyIngress> =>
  createMyIngress(admin, ns, name, s);

const patchSpec = (ns: string, name: string, patch: Record<string, unknown>): Promise<MyIngress> =>
  patchMyIngressSpec(admin, ns, name, patch);

/** The web ACL moto has associated with the load balancer (undefined: none). */
async function aclOf(lbArn: string): Promise<string | undefined> {
  const out = await waf.send(new GetWebACLForResourceCommand({ ResourceArn: lbArn }));
  return out.WebACL?.ARN ?? undefined;
}

/** What a person (or Firewall Manager) does: the ACL of the load balancer becomes `acl` (none: undefined). */
async function setByHand(lbArn: string, acl: string | undefined): Promise<void> {
  // Directly to moto, whose AssociateWebACL does not replace: disassociate first.
  while ((await aclOf(lbArn)) !== undefined)
    await waf.send(new DisassociateWebACLCommand({ ResourceArn: lbArn }));
  if (acl !== undefined) await waf.send(new AssociateWebACLCommand({ WebACLArn: acl, ResourceArn: lbArn }));
}

async function recordTag(lbArn: string): Promise<string | undefined> {
  const out = await elb.send(new DescribeTagsCommand({ ResourceArns: [lbArn] }));
  return out.TagDescriptions?.[0]?.Tags?.find((t) => t.Key === wafAclTag)?.Value;
}

const arnOf = (m: MyIngress): string => String(m.status?.arn);

/** The WAFv2 calls the controller made since the proxy's counts were reset. */
function wafCalls(): Record<string, number> {
  return Object.fromEntries(
    Object.entries(proxy.countsByOperation()).filter(([op]) => op.startsWith('wafv2:')),
  );
}

/** Waits until the controller has reconciled at least `n` more times. */
const reconciles = myIngressReconciles;

describe('MyIngress spec.waf', () => {
  it('associates the web ACL, replaces it when the ARN changes and disassociates it when removed', async () => {
    const { ns } = await setup('ming-waf');
    const lb = arnOf(await create(ns, 'shop', spec({ webAclArn: aclA() })));
    expect(await aclOf(lb)).toBe(aclA());
    expect(await recordTag(lb)).toBe(aclA());

    proxy.resetCalls();
    await patchSpec(ns, 'shop', { waf: { webAclArn: aclB() } });
    expect(await aclOf(lb)).toBe(aclB());
    expect(await recordTag(lb)).toBe(aclB());
    // Replaced in one call, never disassociated in between (no moment without a web ACL).
    expect(wafCalls()).toMatchObject({ 'wafv2:AssociateWebACL': 1 });
    expect(wafCalls()['wafv2:DisassociateWebACL']).toBeUndefined();

    await patchSpec(ns, 'shop', { waf: null });
    expect(await aclOf(lb)).toBeUndefined();
    expect(await recordTag(lb)).toBeUndefined();
  });

  it('puts back, as drift, the ACL it set when it is removed or replaced by hand (at the next full look)', async () => {
    const { ns } = await setup('ming-waf-drift', { settings: { fullCheckMs: 2000 }, resyncPeriod: '1s' });
    const lb = arnOf(await create(ns, 'shop', spec({ webAclArn: aclA() })));
    await setByHand(lb, undefined);
    await waitFor(async () => ((await aclOf(lb)) === aclA() ? true : undefined), {
      timeoutMs: 30_000,
      description: 'web ACL a associated again',
    });
    const drift = await waitFor(
      async () => (await eventsFor(admin, ns, 'shop')).find((e) => e.reason === 'DriftCorrected'),
      { timeoutMs: 30_000, description: 'a DriftCorrected Event' },
    );
    expect(drift.note).toMatch(/web ACL/);
    await setByHand(lb, aclC());
    await waitFor(async () => ((await aclOf(lb)) === aclA() ? true : undefined), {
      timeoutMs: 30_000,
      description: 'web ACL a in place of c',
    });
  });

  it('leaves alone an ACL someone else associated with a load balancer whose spec has no waf', async () => {
    const { ns, controller } = await setup('ming-waf-other', {
      settings: { fullCheckMs: 1000 },
      resyncPeriod: '1s',
    });
    const lb = arnOf(await create(ns, 'shop', spec()));
    await setByHand(lb, aclC());
    proxy.resetCalls();
    // Full looks every second: several of them see the ACL, none touches it, none even reads it.
    await reconciles(controller, 4);
    expect(await aclOf(lb)).toBe(aclC());
    expect(wafCalls()).toEqual({});

    // Asked for an ACL, then not any more — after Firewall Manager replaced it: that one stays.
    await patchSpec(ns, 'shop', { waf: { webAclArn: aclA() } });
    expect(await aclOf(lb)).toBe(aclA());
    await setByHand(lb, aclC());
    await patchSpec(ns, 'shop', { waf: null });
    await reconciles(controller, 3);
    expect(await aclOf(lb)).toBe(aclC());
    expect(await recordTag(lb)).toBeUndefined();
  });

  it('never touches the ACL under policy LeaveAlone, even one it associated itself', async () => {
    const { ns, controller } = await setup('ming-waf-leave', {
      settings: { fullCheckMs: 1000 },
      resyncPeriod: '1s',
    });
    const lb = arnOf(await create(ns, 'shop', spec({ webAclArn: aclA() })));
    expect(await aclOf(lb)).toBe(aclA());
    await patchSpec(ns, 'shop', { waf: { webAclArn: null, policy: 'LeaveAlone' } });
    expect(await aclOf(lb)).toBe(aclA());
    expect(await recordTag(lb)).toBeUndefined();
    proxy.resetCalls();
    await setByHand(lb, aclB());
    await reconciles(controller, 4);
    expect(await aclOf(lb)).toBe(aclB());
    expect(wafCalls()).toEqual({});
    // Back to Managed without an ARN: the record was dropped, so B (not Skylift's) stays too.
    await patchSpec(ns, 'shop', { waf: { policy: 'Managed' } });
    await reconciles(controller, 3);
    expect(await aclOf(lb)).toBe(aclB());
  });

  it('lets two MyIngresses share one ACL (web ACLs are shareable): each associates it with its own load balancer', async () => {
    const { ns } = await setup('ming-waf-shared');
    const one = arnOf(await create(ns, 'one', spec({ webAclArn: aclA() })));
    const two = arnOf(await create(ns, 'two', spec({ webAclArn: aclA() })));
    expect([await aclOf(one), await aclOf(two)]).toEqual([aclA(), aclA()]);
    // Removing it from one leaves the other's association alone.
    await patchSpec(ns, 'one', { waf: null });
    expect([await aclOf(one), await aclOf(two)]).toEqual([undefined, aclA()]);
  });

  it('keeps a no-op resync at one DescribeLoadBalancers with a web ACL: WAFv2 is read at full looks only', async () => {
    const { ns, controller } = await setup('ming-waf-cost', { resyncPeriod: '1s' });
    await create(ns, 'shop', spec({ webAclArn: aclA() }));
    proxy.resetCalls();
    const before = await counterValue(controller.metrics.reconcileTotal, { controller: 'myingress' });
    await reconciles(controller, 3);
    const resyncs =
      (await counterValue(controller.metrics.reconcileTotal, { controller: 'myingress' })) - before;
    const counts = proxy.countsByOperation();
    expect(counts['elasticloadbalancing:DescribeLoadBalancers'] ?? 0).toBeLessThanOrEqual(resyncs);
    expect(Object.keys(counts).filter((op) => op !== 'elasticloadbalancing:DescribeLoadBalancers')).toEqual(
      [],
    );
  });
});

describe('MyIngress spec.waf under a TeamPolicy requiring a web ACL on internet-facing load balancers', () => {
  it('is Forbidden without one, naming spec.waf.webAclArn, and served once it names an allowed ACL', async () => {
    const { ns } = await setup('ming-waf-team', { teams: true });
    await applyTeamPolicy(admin, group, `${ns}-team`, {
      namespaces: { names: [ns] },
      guardrails: {
        loadBalancers: { webAcls: { requiredOnInternetFacing: true, arns: [aclA()] } },
      },
    });
    proxy.resetCalls();
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'public' },
      spec: { ...spec(), scheme: 'internet-facing' },
    });
    const synced = await waitFor(
      async () => {
        const m = await readObject<MyIngress>(admin, myIngressType, ns, 'public');
        const c: Condition | undefined = m?.status?.conditions?.find((x) => x.type === 'Synced');
        return c?.reason === 'Forbidden' ? c : undefined;
      },
      { timeoutMs: 30_000, description: 'Synced=False Forbidden' },
    );
    expect(synced.message).toBe(
      `TeamPolicy ${ns}-team forbids spec.waf.webAclArn: an internet-facing load balancer in this namespace must have a web ACL that Skylift associates and keeps; set spec.waf.webAclArn to an allowed web ACL (${aclA()}) with spec.waf.policy Managed (the default), or ask the platform team to turn off spec.guardrails.loadBalancers.webAcls.requiredOnInternetFacing`,
    );
    // Nothing was created in AWS.
    expect(proxy.countsByOperation()['elasticloadbalancing:CreateLoadBalancer']).toBeUndefined();

    await admin.patch(
      resourcePath(myIngressType, { namespace: ns, name: 'public' }),
      { spec: { waf: { webAclArn: aclB() } } },
      'merge',
    );
    await waitFor(
      async () => {
        const m = await readObject<MyIngress>(admin, myIngressType, ns, 'public');
        const c = m?.status?.conditions?.find((x) => x.type === 'Synced');
        return c?.message.includes(`web ACL ${aclB()} is not among the web ACLs`) === true ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'Forbidden naming web ACL b' },
    );

    await admin.patch(
      resourcePath(myIngressType, { namespace: ns, name: 'public' }),
      { spec: { waf: { webAclArn: aclA() } } },
      'merge',
    );
    const m = await waitSettledAtGeneration<MyIngress>(admin, myIngressType, ns, 'public', 'allowed ACL');
    expect(await aclOf(arnOf(m))).toBe(aclA());
  });
});
