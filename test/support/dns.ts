// Runs the DNSRecord controller in the test process against the stack's
// apiserver and the emulator behind a fault proxy, plus Route 53 helpers.
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import type { TenantSource } from '../../src/tenancy/directory.ts';
import {
  ChangeResourceRecordSetsCommand,
  CreateHostedZoneCommand,
  DeleteHostedZoneCommand,
  GetHostedZoneCommand,
  ListHostedZonesByNameCommand,
  ListResourceRecordSetsCommand,
  type ListResourceRecordSetsCommandOutput,
  Route53Client,
  type Change,
  type ResourceRecordSet,
} from '@aws-sdk/client-route-53';
import { dnsRecordType, type DNSRecord, type DNSRecordSpec } from '../../src/kinds/dnsrecord/api.ts';
import { dnsRecordController } from '../../src/kinds/dnsrecord/controller.ts';
import { defaultDNSRecordSettings, type DNSRecordSettings } from '../../src/kinds/dnsrecord/settings.ts';
import { waitFor } from '../../dev/wait.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import type { Condition } from '../../src/apis/managed.ts';
import { startController, type AccountsTestOptions, type RunningController } from './controllers.ts';
import { readObject } from './kube.ts';
import { awsClientConfig } from '../../dev/emulator.ts';

export type RunningDnsController = RunningController;

/** Starts the DNSRecord controller for one namespace, talking to AWS at `endpoint`. */
export async function startDnsController(opts: {
  namespace: string;
  endpoint: string;
  resyncPeriod?: string;
  settings?: Partial<DNSRecordSettings>;
  awsTimeoutMs?: number;
  tenants?: TenantSource;
  accounts?: AccountsTestOptions;
}): Promise<RunningDnsController> {
  return startController(
    (s) => dnsRecordController(s, { ...defaultDNSRecordSettings, pollMs: 250, ...opts.settings }),
    {
      namespace: opts.namespace,
      endpoint: opts.endpoint,
      ...(opts.resyncPeriod !== undefined ? { resyncPeriod: opts.resyncPeriod } : {}),
      ...(opts.awsTimeoutMs !== undefined ? { awsTimeoutMs: opts.awsTimeoutMs } : {}),
      ...(opts.tenants !== undefined ? { tenants: opts.tenants } : {}),
      ...(opts.accounts !== undefined ? { accounts: opts.accounts } : {}),
    },
  );
}

/**
 * A Route 53 client straight to an endpoint acting as role `roleArn` (moto puts what an assumed
 * role makes in the role's account), as the account's platform team would. Destroy it when done.
 */
export async function route53AsRole(
  endpoint: string,
  roleArn: string,
  sessionName: string,
): Promise<Route53Client> {
  const config = awsClientConfig(endpoint);
  const sts = new STSClient(config);
  try {
    const out = await sts.send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: sessionName }));
    const c = out.Credentials;
    if (c?.AccessKeyId === undefined || c.SecretAccessKey === undefined || c.SessionToken === undefined)
      throw new Error('moto answered AssumeRole without credentials');
    return new Route53Client({
      ...config,
      credentials: {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        sessionToken: c.SessionToken,
      },
    });
  } finally {
    sts.destroy();
  }
}

/** A Route 53 client straight to an endpoint (the emulator, bypassing the operator). */
export function route53At(endpoint: string): Route53Client {
  return new Route53Client(awsClientConfig(endpoint));
}

export async function createZone(r53: Route53Client, name: string): Promise<string> {
  const out = await r53.send(
    new CreateHostedZoneCommand({ Name: name, CallerReference: `${name}-${Date.now()}-${Math.random()}` }),
  );
  return (out.HostedZone?.Id ?? '').replace('/hostedzone/', '');
}

/** The ID of the public zone `name`, created if no zone of that name exists (files sharing one emulator). */
export async function ensureZone(r53: Route53Client, name: string): Promise<string> {
  const zones = await r53.send(new ListHostedZonesByNameCommand({ DNSName: name, MaxItems: 1 }));
  const existing = zones.HostedZones?.find((z) => z.Name === `${name}.`);
  return existing?.Id?.replace('/hostedzone/', '') ?? createZone(r53, name);
}

export async function listRecords(r53: Route53Client, zoneId: string): Promise<ResourceRecordSet[]> {
  const all: ResourceRecordSet[] = [];
  let start: { name?: string; type?: string } | undefined = {};
  while (start !== undefined) {
    const out: ListResourceRecordSetsCommandOutput = await r53.send(
      new ListResourceRecordSetsCommand({
        HostedZoneId: zoneId,
        ...(start.name !== undefined ? { StartRecordName: start.name } : {}),
        ...(start.type !== undefined ? { StartRecordType: start.type as 'A' } : {}),
      }),
    );
    all.push(...(out.ResourceRecordSets ?? []));
    start =
      out.IsTruncated === true
        ? {
            ...(out.NextRecordName !== undefined ? { name: out.NextRecordName } : {}),
            ...(out.NextRecordType !== undefined ? { type: out.NextRecordType } : {}),
          }
        : undefined;
  }
  return all;
}

export async function changeRecords(r53: Route53Client, zoneId: string, changes: Change[]): Promise<void> {
  await r53.send(
    new ChangeResourceRecordSetsCommand({ HostedZoneId: zoneId, ChangeBatch: { Changes: changes } }),
  );
}

/**
 * Deletes a hosted zone as someone outside Skylift would: every record set but the zone's own SOA
 * and apex NS (Route 53 refuses to delete a zone holding others), then the zone itself.
 */
export async function deleteZone(r53: Route53Client, zoneId: string): Promise<void> {
  const zone = await r53.send(new GetHostedZoneCommand({ Id: zoneId }));
  const apex = zone.HostedZone?.Name ?? '';
  const others = (await listRecords(r53, zoneId)).filter(
    (r) => !(r.Name === apex && (r.Type === 'SOA' || r.Type === 'NS')),
  );
  if (others.length > 0)
    await changeRecords(
      r53,
      zoneId,
      others.map((r) => ({ Action: 'DELETE', ResourceRecordSet: r })),
    );
  await r53.send(new DeleteHostedZoneCommand({ Id: zoneId }));
}

/** Finds a record set by name (with or without the trailing dot) and type. */
export function findRecord(
  records: ResourceRecordSet[],
  name: string,
  type: string,
): ResourceRecordSet | undefined {
  const n = name.endsWith('.') ? name : `${name}.`;
  return records.find((r) => r.Name === n && r.Type === type);
}

export function createDnsRecord(
  client: KubeClient,
  ns: string,
  name: string,
  spec: DNSRecordSpec,
): Promise<DNSRecord> {
  return client.create<DNSRecord>(resourcePath(dnsRecordType, { namespace: ns }), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'DNSRecord',
    metadata: { name },
    spec,
  });
}

/** Waits until a DNSRecord's condition has the given status (and reason, if given). */
export async function waitForCondition(
  client: KubeClient,
  ns: string,
  name: string,
  want: { type: string; status: string; reason?: string },
  timeoutMs = 30_000,
): Promise<DNSRecord> {
  let last: Condition[] | undefined;
  try {
    return await waitFor(
      async () => {
        const r = await readObject<DNSRecord>(client, dnsRecordType, ns, name);
        last = r?.status?.conditions;
        const c: Condition | undefined = r?.status?.conditions?.find((x) => x.type === want.type);
        return c !== undefined &&
          c.status === want.status &&
          (want.reason === undefined || c.reason === want.reason)
          ? r
          : undefined;
      },
      {
        timeoutMs,
        description: `${ns}/${name} ${want.type}=${want.status}${want.reason !== undefined ? ` (${want.reason})` : ''}`,
      },
    );
  } catch (err) {
    // What the object said last, so a failure shows where it stood, not only what was awaited.
    const seen = (last ?? []).map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`);
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}; last conditions: ${seen.length > 0 ? seen.join(' | ') : 'none'}`,
      { cause: err },
    );
  }
}
