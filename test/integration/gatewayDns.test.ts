// A Gateway annotated skylift.dev/dns-zone publishes its routes' hostnames in Route 53 through
// DNSRecords it owns (docs/gateway.md, "DNS"): two routes with hostnames in the zone become two
// alias A records to the Gateway's ALB, a hostname outside the zone is reported on the Gateway; a
// route deleted takes its record, a hostname changed moves it; a DNSRecord someone else made for a
// hostname is left alone and the conflict reported; a hostname the namespace's TeamPolicy does not
// allow is refused on its DNSRecord and named on the Gateway; the Gateway deleted takes its records from
// Route 53 and its DNSRecords (the garbage collector's and the controller's work; the DNSRecord
// finalizer removes each record first). A control plane of its own (with kube-controller-manager,
// for the garbage collector) with the Gateway API's CRDs; the Gateway controller, the Gateway
// groups' controller and the DNSRecord controller run in the test process against moto.
import { EC2Client } from '@aws-sdk/client-ec2';
import type { Route53Client, ResourceRecordSet } from '@aws-sdk/client-route-53';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import type { ControlPlane } from '../../dev/controlplane.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { waitFor } from '../../dev/wait.ts';
import {
  gatewayClassType,
  gatewayType,
  httpRouteType,
  skyliftGatewayControllerName,
  type Gateway,
  type HTTPRoute,
} from '../../src/apis/gatewayApi.ts';
import type { Condition } from '../../src/apis/managed.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { dnsRecordType, type DNSRecord } from '../../src/kinds/dnsrecord/api.ts';
import { dnsRecordController } from '../../src/kinds/dnsrecord/controller.ts';
import { defaultDNSRecordSettings } from '../../src/kinds/dnsrecord/settings.ts';
import { myIngressGroupType, type MyIngressGroup } from '../../src/kinds/myingress/group/api.ts';
import {
  DnsReason,
  dnsConditionType,
  dnsZoneAnnotation,
  gatewayRecordLabel,
} from '../../src/kinds/myingress/gateway/dns.ts';
import { gatewayGroupName } from '../../src/kinds/myingress/gateway/names.ts';
import { normalizeName } from '../../src/providers/route53/names.ts';
import { isKubeNotFound } from '../../src/runtime/errors.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import {
  gatewaySubnets,
  startGatewayControlPlane,
  startGatewayControllers,
} from '../support/gatewayControllers.ts';
import { createZone, listRecords, route53At } from '../support/dns.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { applyTeamPolicy, startTenants } from '../../dev/teamPolicies.ts';
import type { TenantDirectory } from '../../src/tenancy/directory.ts';

const suffix = randomBytes(3).toString('hex');
const zone = `gwdns-${suffix}.example.com`;
/** The subnets' tag the Gateway's load balancer is placed by (no other test's subnets carry it). */
const subnetTag = `skylift.test/gwdns-${suffix}`;

let cp: ControlPlane;
let admin: KubeClient;
let proxy: AwsFaultProxy;
let ec2: EC2Client;
let r53: Route53Client;
let zoneId: string;
let tenants: TenantDirectory;
const running: RunningController[] = [];

beforeAll(async () => {
  ({ cp, admin } = await startGatewayControlPlane('gateway-dns', { controllerManager: true }));
  ec2 = new EC2Client(awsClientConfig(stackInfo().awsEndpoint));
  r53 = route53At(stackInfo().awsEndpoint);
  await gatewaySubnets(ec2, 35, subnetTag);
  zoneId = await createZone(r53, zone);
  proxy = await startFaultProxy();
  tenants = await startTenants(admin, 'integration-gateway-dns');
}, 180_000);

afterAll(async () => {
  for (const r of running.splice(0)) await r.stop();
  await tenants.stop();
  await proxy.stop();
  ec2.destroy();
  r53.destroy();
  await cp.stop();
});

const cond = (cs: readonly Condition[] | undefined, type: string): Condition | undefined =>
  cs?.find((c) => c.type === type);

/** The A record set of `name` in the zone, if there is one. */
function aRecord(records: readonly ResourceRecordSet[], name: string): ResourceRecordSet | undefined {
  return records.find((r) => normalizeName(r.Name ?? '') === normalizeName(name) && r.Type === 'A');
}

function route(ns: string, name: string, gateway: string, hostnames: string[]): HTTPRoute {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { namespace: ns, name },
    spec: {
      parentRefs: [{ name: gateway }],
      hostnames,
      rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
    },
  };
}

describe('Route 53 records for the hostnames of a Gateway’s routes', () => {
  it('publishes hostnames in the zone as alias records to the ALB, reports the others and a foreign record, follows routes, and goes with the Gateway', async () => {
    const ns = `gwdns-${suffix}`;
    await admin.create('/api/v1/namespaces', { metadata: { name: ns } });
    const hostA = `a.${zone}`;
    const hostA2 = `a2.${zone}`;
    const hostB = `b.${zone}`;
    const hostD = `d.${zone}`;
    const hostX = `x.${zone}`;
    const outside = `c-${suffix}.example.org`;
    // The namespace's TeamPolicy lets it write the zone's a, a2, b and d names only: x is refused.
    await applyTeamPolicy(admin, 'integration-gateway-dns', `gwdns-${suffix}`, {
      namespaces: { names: [ns] },
      guardrails: { dnsRecords: { zones: [{ name: zone }], names: [hostA, hostA2, hostB, hostD] } },
    });
    await waitFor(async () => ((await tenants.tenancyOf(ns)).kind === 'policy' ? true : undefined), {
      timeoutMs: 20_000,
      description: 'the TeamPolicy serving the namespace',
    });
    const opts = { namespace: ns, endpoint: proxy.endpoint, client: admin };
    running.push(
      ...(await startGatewayControllers({
        namespace: ns,
        endpoint: proxy.endpoint,
        client: admin,
        subnetTag,
        resyncPeriod: '2s',
      })),
    );
    running.push(
      await startController(
        (s) => dnsRecordController(s, { ...defaultDNSRecordSettings, pollMs: 250, zoneCacheTtlMs: 500 }),
        { ...opts, resyncPeriod: '2s', tenants },
      ),
    );

    const className = `skylift-dns-${suffix}`;
    await admin.create(resourcePath(gatewayClassType), {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: className },
      spec: { controllerName: skyliftGatewayControllerName },
    });
    const gwName = 'shared';
    await admin.create(resourcePath(gatewayType, { namespace: ns }), {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: gwName, annotations: { [dnsZoneAnnotation]: zone } },
      spec: { gatewayClassName: className, listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    });

    // Someone else's DNSRecord for a hostname a route will ask for, made before the route.
    await admin.create(resourcePath(dnsRecordType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'DNSRecord',
      metadata: { name: 'theirs' },
      spec: { zoneName: zone, name: 'd', type: 'A', ttl: 60, records: ['192.0.2.7'] },
    });

    const routes = resourcePath(httpRouteType, { namespace: ns });
    await admin.create(routes, route(ns, 'a', gwName, [hostA]));
    await admin.create(routes, route(ns, 'b', gwName, [hostB, outside]));
    await admin.create(routes, route(ns, 'd', gwName, [hostD]));
    await admin.create(routes, route(ns, 'x', gwName, [hostX]));

    const group = await waitFor(
      async () => {
        const g = await admin.get<MyIngressGroup>(
          resourcePath(myIngressGroupType, { name: gatewayGroupName(ns, gwName) }),
        );
        return typeof g.status?.dnsName === 'string' && g.status.dnsName !== '' ? g : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'the Gateway’s load balancer with a DNS name' },
    );
    const albName = normalizeName(String(group.status?.dnsName));

    // Two alias records to the ALB in Route 53; the foreign record's value untouched.
    const published = await waitFor(
      async () => {
        const rs = await listRecords(r53, zoneId);
        const a = aRecord(rs, hostA);
        const b = aRecord(rs, hostB);
        return a?.AliasTarget !== undefined && b?.AliasTarget !== undefined ? rs : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'alias records of both hostnames in Route 53' },
    );
    for (const h of [hostA, hostB]) {
      const rr = aRecord(published, h);
      expect(normalizeName(rr?.AliasTarget?.DNSName ?? '')).toBe(albName);
      expect(rr?.AliasTarget?.HostedZoneId).toBe(group.status?.canonicalHostedZoneId);
    }
    expect(published.some((r) => normalizeName(r.Name ?? '').includes('example.org'))).toBe(false);

    // The Gateway says which hostname is outside the zone and which conflicts with whose record.
    const gw = await waitFor(
      async () => {
        const g = await admin.get<Gateway>(resourcePath(gatewayType, { namespace: ns, name: gwName }));
        const c = cond(g.status?.conditions, dnsConditionType);
        return c?.reason === DnsReason.RecordsNotSynced &&
          c.message.includes(outside) &&
          c.message.includes(`${hostX}: Forbidden`)
          ? g
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'the Gateway’s DNS condition' },
    );
    const dnsCond = cond(gw.status?.conditions, dnsConditionType);
    expect(dnsCond?.status).toBe('False');
    expect(dnsCond?.message).toContain(`${hostD}: DNSRecord ${ns}/theirs, not made by this Gateway`);
    expect(dnsCond?.message).toContain(`${outside} (HTTPRoute ${ns}/b)`);
    expect(cond(gw.status?.conditions, 'Programmed')).toBeDefined();

    // The Gateway's DNSRecords: labelled and owned; the foreign one left as it was.
    const listRecordsOf = async (): Promise<DNSRecord[]> =>
      (await admin.get<{ items: DNSRecord[] }>(resourcePath(dnsRecordType, { namespace: ns }))).items;
    const ours = (await listRecordsOf()).filter((r) => r.metadata.labels?.[gatewayRecordLabel] === gwName);
    expect(ours.map((r) => r.spec.name).sort()).toEqual([`${hostA}.`, `${hostB}.`, `${hostX}.`]);
    // The refused one says so on its DNSRecord, and nothing of it is in Route 53.
    const refused = ours.find((r) => r.spec.name === `${hostX}.`);
    expect(cond(refused?.status?.conditions, 'Synced')).toMatchObject({
      status: 'False',
      reason: 'Forbidden',
    });
    expect(aRecord(await listRecords(r53, zoneId), hostX)).toBeUndefined();
    for (const r of ours)
      expect(r.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'Gateway', name: gwName, uid: gw.metadata.uid, controller: true }),
      ]);
    const theirs = await admin.get<DNSRecord>(resourcePath(dnsRecordType, { namespace: ns, name: 'theirs' }));
    expect(theirs.metadata.ownerReferences).toBeUndefined();
    expect(theirs.metadata.labels?.[gatewayRecordLabel]).toBeUndefined();
    expect(aRecord(published, hostD)?.ResourceRecords?.map((v) => v.Value)).toEqual(['192.0.2.7']);

    // A route deleted: its record goes from Route 53 and its DNSRecord from the cluster.
    await admin.delete(resourcePath(httpRouteType, { namespace: ns, name: 'b' }));
    await waitFor(
      async () => {
        const rs = await listRecords(r53, zoneId);
        const objs = await listRecordsOf();
        return aRecord(rs, hostB) === undefined && !objs.some((r) => r.spec.name === `${hostB}.`)
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'route b’s record gone' },
    );

    // A hostname changed: the old record deleted, the new one made.
    await admin.patch(
      resourcePath(httpRouteType, { namespace: ns, name: 'a' }),
      { spec: { hostnames: [hostA2] } },
      'merge',
    );
    await waitFor(
      async () => {
        const rs = await listRecords(r53, zoneId);
        return aRecord(rs, hostA) === undefined && aRecord(rs, hostA2)?.AliasTarget !== undefined
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'route a’s record moved to its new hostname' },
    );

    // The Gateway deleted: it stays (Skylift's finalizer) until its records are gone from Route 53
    // and its DNSRecords are gone; theirs stays.
    await admin.delete(resourcePath(gatewayType, { namespace: ns, name: gwName }));
    await waitFor(
      async () => {
        try {
          await admin.get(resourcePath(gatewayType, { namespace: ns, name: gwName }));
          return undefined;
        } catch (err) {
          if (isKubeNotFound(err)) return true;
          throw err;
        }
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'the Gateway gone' },
    );
    expect(aRecord(await listRecords(r53, zoneId), hostA2)).toBeUndefined();
    expect(
      (await listRecordsOf()).filter((r) => r.metadata.labels?.[gatewayRecordLabel] !== undefined),
    ).toEqual([]);
    expect(aRecord(await listRecords(r53, zoneId), hostD)?.ResourceRecords?.map((v) => v.Value)).toEqual([
      '192.0.2.7',
    ]);
    expect((await listRecordsOf()).map((r) => r.metadata.name)).toEqual(['theirs']);
  }, 240_000);
});
