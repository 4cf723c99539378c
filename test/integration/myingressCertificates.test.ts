// MyIngress spec.listeners[].certificateHosts on the real apiserver and moto, through the fault
// proxy with the rule that makes moto's ListCertificates answer as AWS's (dev/acmFidelity.ts).
// Certificates are self-signed ones imported into ACM (moto leaves a requested one
// PENDING_VALIDATION), under a domain of this run's own: other files' certificates stay in moto.
import { randomBytes } from 'node:crypto';
import { ACMClient } from '@aws-sdk/client-acm';
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeListenerCertificatesCommand,
  DescribeListenersCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acmListCertificatesAsAws } from '../../dev/acmFidelity.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { applyTeamPolicy, deleteTeamPolicies, startTenants } from '../../dev/teamPolicies.ts';
import { waitFor } from '../../dev/wait.ts';
import type { Condition } from '../../src/apis/managed.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import {
  myIngressType,
  type ListenerSpec,
  type MyIngress,
  type MyIngressSpec,
} from '../../src/kinds/myingress/api.ts';
import type { MyIngressSettings } from '../../src/kinds/myingress/settings.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { TenantDirectory } from '../../src/tenancy/directory.ts';
import { importCertificate } from '../support/acmCertificates.ts';
import type { RunningController } from '../support/controllers.ts';
import { waitSettledAtGeneration } from '../support/fieldProbes.ts';
import { kubeClient, readObject } from '../support/kube.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';
import { myIngressReconciles, serveMyIngressNamespace } from '../support/myingressObjects.ts';

const group = 'integration-myingress-certificates';
let admin: KubeClient;
let proxy: AwsFaultProxy;
let elb: ElasticLoadBalancingV2Client;
let acm: ACMClient;
let tenants: TenantDirectory;
let subnets: string[];
/** This run's own domain: no other file's certificate covers a name under it. */
const domain = `${randomBytes(4).toString('hex')}.certs.example.com`;
const running: RunningController[] = [];
/** Certificates imported in beforeAll. */
let shopExact = '';
let wildcard = '';

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
  proxy.inject(acmListCertificatesAsAws());
  tenants = await startTenants(admin, group);
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  elb = new ElasticLoadBalancingV2Client(direct);
  acm = new ACMClient(direct);
  subnets = (await vpcWithTwoSubnets(new EC2Client(direct), 57)).subnets;
  shopExact = await importCertificate(acm, { domain: `shop.${domain}` });
  // An ECDSA key: listed only because the lookup asks for every key type a load balancer takes.
  wildcard = await importCertificate(acm, { domain, sans: [`*.${domain}`], ec: true });
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

const https = (over: Partial<ListenerSpec>): ListenerSpec => ({
  port: 443,
  protocol: 'HTTPS',
  defaultAction: { fixedResponse: { statusCode: 200 } },
  ...over,
});
const spec = (listener: ListenerSpec): MyIngressSpec => ({
  subnets,
  scheme: 'internal',
  listeners: [listener],
});

async function create(
  ns: string,
  name: string,
  s: MyIngressSpec,
  wait = true,
): Promise<MyIngress | undefined> {
  await admin.create(resourcePath(myIngressType, { namespace: ns }), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: { name },
    spec: s,
  });
  return wait ? waitSettledAtGeneration<MyIngress>(admin, myIngressType, ns, name, 'create') : undefined;
}

/** The listener on 443 as ELBv2 has it: its default certificate and its SNI certificates (sorted). */
async function certificatesOn(m: MyIngress): Promise<{ default?: string; sni: string[] } | undefined> {
  const ls = await elb.send(new DescribeListenersCommand({ LoadBalancerArn: String(m.status?.arn) }));
  const l = ls.Listeners?.find((x) => x.Port === 443);
  if (l?.ListenerArn === undefined) return undefined;
  const certs = await elb.send(new DescribeListenerCertificatesCommand({ ListenerArn: l.ListenerArn }));
  const all = certs.Certificates ?? [];
  const def = (all.find((c) => c.IsDefault === true) ?? all[0])?.CertificateArn;
  return {
    ...(def !== undefined ? { default: def } : {}),
    sni: all
      .map((c) => c.CertificateArn ?? '')
      .filter((a) => a !== '' && a !== def)
      .sort(),
  };
}

const condition = async (ns: string, name: string, type: string): Promise<Condition | undefined> =>
  (await readObject<MyIngress>(admin, myIngressType, ns, name))?.status?.conditions?.find(
    (c) => c.type === type,
  );

function acmCalls(): Record<string, number> {
  return Object.fromEntries(
    Object.entries(proxy.countsByOperation()).filter(([op]) => op.startsWith('acm:')),
  );
}

const reconciles = myIngressReconciles;

describe('MyIngress certificateHosts', () => {
  it('serves the certificates ACM has for the hosts: the first host’s as default, the rest by SNI, exact before wildcard', async () => {
    const { ns } = await setup('ming-certs');
    const one = await create(ns, 'one', spec(https({ certificateHosts: [`shop.${domain}`] })));
    if (one === undefined) throw new Error('not created');
    expect(await certificatesOn(one)).toEqual({ default: shopExact, sni: [] });
    expect((await condition(ns, 'one', 'Ready'))?.status).toBe('True');

    // Two hosts: shop has an exact certificate (default), api only the wildcard (SNI).
    const two = await create(
      ns,
      'two',
      spec(https({ certificateHosts: [`shop.${domain}`, `api.${domain}`] })),
    );
    if (two === undefined) throw new Error('not created');
    expect(await certificatesOn(two)).toEqual({ default: shopExact, sni: [wildcard] });

    // Changing the hosts after create: the default becomes api's (the wildcard), shop's goes.
    await admin.patch(
      resourcePath(myIngressType, { namespace: ns, name: 'two' }),
      { spec: { listeners: [https({ certificateHosts: [`api.${domain}`] })] } },
      'merge',
    );
    await waitSettledAtGeneration<MyIngress>(admin, myIngressType, ns, 'two', 'hosts changed');
    expect(await certificatesOn(two)).toEqual({ default: wildcard, sni: [] });
  });

  it('shares one ListCertificates between objects (no exclusivity: two use the same certificate) and makes no ACM call at a no-op resync', async () => {
    const { ns, controller } = await setup('ming-certs-cost', { resyncPeriod: '1s' });
    proxy.resetCalls();
    const made: MyIngress[] = [];
    for (const name of ['a', 'b', 'c']) {
      const m = await create(
        ns,
        name,
        spec(https({ certificateHosts: [`shop.${domain}`, `api.${domain}`] })),
      );
      if (m !== undefined) made.push(m);
    }
    for (const m of made) expect(await certificatesOn(m)).toEqual({ default: shopExact, sni: [wildcard] });
    // One list for the three creates and every look since (within --acm-certificate-list-max-age);
    // every name is in the summaries, so nothing is described.
    expect(acmCalls()).toEqual({ 'acm:ListCertificates': 1 });
    proxy.resetCalls();
    await reconciles(controller, 6);
    expect(acmCalls()).toEqual({});
  });

  it('is not Ready for a host no certificate covers, and serves one imported later at the next look without a spec change', async () => {
    const { ns } = await setup('ming-certs-later', {
      settings: { certificateListMaxAgeMs: 200 },
      resyncPeriod: '1s',
    });
    const host = `later.${randomBytes(3).toString('hex')}.example.org`;
    await create(ns, 'later', spec(https({ certificateHosts: [host] })), false);
    const ready = await waitFor(
      async () => {
        const c = await condition(ns, 'later', 'Ready');
        return c?.reason === 'CertificateNotFound' ? c : undefined;
      },
      { timeoutMs: 30_000, description: 'Ready=False CertificateNotFound' },
    );
    expect(ready.status).toBe('False');
    expect(ready.message).toBe(
      `spec.listeners[0].certificateHosts[0] "${host}": no ISSUED ACM certificate in us-east-1 covers ${host}, so the listener is left as it is; request or import a certificate for ${host} in ACM in us-east-1, or set spec.listeners[0].certificateArn and remove the host.`,
    );
    expect((await condition(ns, 'later', 'Synced'))?.status).toBe('True');
    const before = await readObject<MyIngress>(admin, myIngressType, ns, 'later');
    if (before === undefined) throw new Error('gone');
    // Never another certificate in its place: no listener at all until one covers the host.
    expect(await certificatesOn(before)).toBeUndefined();

    const issued = await importCertificate(acm, { domain: host, days: 30 });
    const after = await waitSettledAtGeneration<MyIngress>(
      admin,
      myIngressType,
      ns,
      'later',
      'certificate imported',
    );
    expect(after.metadata.generation).toBe(before.metadata.generation);
    expect(await certificatesOn(after)).toEqual({ default: issued, sni: [] });

    // A newer certificate for the host (expiring later: a reissue) replaces it at a later look.
    const reissued = await importCertificate(acm, { domain: host, days: 90 });
    await waitFor(async () => ((await certificatesOn(after))?.default === reissued ? true : undefined), {
      timeoutMs: 30_000,
      description: 'the reissued certificate as default',
    });
  });
});

describe('MyIngress certificateHosts under a TeamPolicy limiting certificates', () => {
  it('refuses a host whose certificate the policy does not allow, naming the host field and the ARN found', async () => {
    const { ns } = await setup('ming-certs-team', { teams: true });
    await applyTeamPolicy(admin, group, `${ns}-team`, {
      namespaces: { names: [ns] },
      guardrails: { loadBalancers: { certificates: { arns: [shopExact] } } },
    });
    proxy.resetCalls();
    await create(
      ns,
      'refused',
      spec(https({ certificateHosts: [`shop.${domain}`, `api.${domain}`] })),
      false,
    );
    const synced = await waitFor(
      async () => {
        const c = await condition(ns, 'refused', 'Synced');
        return c?.reason === 'Forbidden' ? c : undefined;
      },
      { timeoutMs: 30_000, description: 'Synced=False Forbidden' },
    );
    expect(synced.message).toBe(
      `TeamPolicy ${ns}-team forbids spec.listeners[0].certificateHosts[1]: certificate ${wildcard}, which ACM has for api.${domain}, is not among the certificates this namespace may use (${shopExact}); use a host whose certificate is allowed (or name an allowed certificate in certificateArn), or ask the platform team to allow ${wildcard} in spec.guardrails.loadBalancers.certificates`,
    );
    expect(proxy.countsByOperation()['elasticloadbalancing:CreateLoadBalancer']).toBeUndefined();

    // The allowed host alone is served.
    await admin.patch(
      resourcePath(myIngressType, { namespace: ns, name: 'refused' }),
      { spec: { listeners: [https({ certificateHosts: [`shop.${domain}`] })] } },
      'merge',
    );
    const m = await waitSettledAtGeneration<MyIngress>(admin, myIngressType, ns, 'refused', 'allowed host');
    expect(await certificatesOn(m)).toEqual({ default: shopExact, sni: [] });
  });
});
