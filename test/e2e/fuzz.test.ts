// Fuzzed and hostile input for all three kinds, applied to the real
// apiserver with `skylift run` as a process and moto behind the counting
// proxy. Every generated object must end rejected at admission (with a
// message naming a field), Ready, or Synced=False Terminal/Conflict with a
// usable message — or, for a MyIngress naming a Service or port its
// namespace really lacks, Ready=False ServiceNotFound/ServicePortNotFound —
// before a deadline; the operator must stay alive and healthy, and a record
// created afterwards must still become Ready.
//
// Reproduce or widen a run: SKYLIFT_FUZZ_SEED=<seed> SKYLIFT_FUZZ_RUNS=<n per kind>.
import { randomBytes } from 'node:crypto';
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeLoadBalancersCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { DescribeDBInstancesCommand, RDSClient } from '@aws-sdk/client-rds';
import { DeleteHostedZoneCommand } from '@aws-sdk/client-route-53';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsRecordType } from '../../src/kinds/dnsrecord/api.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { managedDbType } from '../../src/kinds/manageddb/api.ts';
import { myIngressType } from '../../src/kinds/myingress/api.ts';
import { ensureElbSubnets } from '../../dev/awsAccount.ts';
import { waitFor } from '../../dev/wait.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath, type ResourceType } from '../../src/apis/meta.ts';
import { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { createZone, listRecords, route53At } from '../support/dns.ts';
import { dnsRecordCases, dnsRecordPinned } from '../support/fuzz/dnsrecord.ts';
import { managedDbCases, managedDbPinned } from '../support/fuzz/manageddb.ts';
import type { FuzzCase } from '../support/fuzz/mutate.ts';
import {
  backendVerdict,
  fuzzServiceManifests,
  fuzzServices,
  myIngressCases,
  myIngressPinned,
} from '../support/fuzz/myingress.ts';
import { healthProblems, probeAddress } from '../support/fuzz/operatorHealth.ts';
import {
  admit,
  describeCase,
  describeStatus,
  fuzzSettings,
  namesAField,
  settledState,
  unhelpfulMessage,
  withoutQuotedValues,
  type Admission,
  type ObservedStatus,
  type Settled,
} from '../support/fuzz/outcome.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';

/** How long every admitted object of one batch gets to settle. */
const settleDeadlineMs = 60_000;

let admin: KubeClient;
let ns: string;
let zoneName: string;
let zoneId: string;
let proxy: AwsFaultProxy;
let operator: SkyliftProcess;
let probe: string;

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  ns = await newNamespace(admin, 'e2e-fuzz');
  // The Services generated MyIngresses forward to, as a user would have them beside a MyIngress:
  // valid specs must become Ready; a mutated one naming another Service must say it is missing.
  for (const svc of fuzzServiceManifests()) await admin.create(`/api/v1/namespaces/${ns}/services`, svc);
  const endpoint = stackInfo().awsEndpoint;
  zoneName = `fuzz-${randomBytes(3).toString('hex')}.example`;
  zoneId = await createZone(route53At(endpoint), zoneName);
  const ec2 = new EC2Client(awsClientConfig(endpoint));
  await ensureElbSubnets(ec2, 'us-east-1');
  ec2.destroy();
  proxy = await AwsFaultProxy.start({ target: endpoint });
  operator = spawnSkylift(ns, proxy.endpoint, [
    '--route53-batch-window',
    '200ms',
    '--rds-poll-interval',
    '1s',
    '--workers',
    '8',
  ]);
  const op = operator;
  probe = await waitFor(() => probeAddress(op.output()), {
    timeoutMs: 30_000,
    description: 'skylift run to log its probe address',
  });
  await waitFor(() => (op.output().includes('controllers started') ? true : undefined), {
    timeoutMs: 30_000,
    description: 'skylift run to start its controllers',
  });
});

afterAll(async () => {
  await operator.stop();
  await proxy.stop();
});

/** One generated object and what happened to it. */
interface Tried {
  readonly name: string;
  readonly fuzz: FuzzCase;
  readonly admission: Admission;
  settled?: Settled | undefined;
  last?: ObservedStatus | undefined;
}

/**
 * Creates the kind's pinned cases and `runs` cases sampled with `seed` (every
 * other one with strict field validation), then waits until every admitted
 * object has settled or the deadline passes. Returns every case with its outcome.
 */
async function runBatch(
  type: ResourceType,
  prefix: string,
  pinnedCases: readonly FuzzCase[],
  arb: fc.Arbitrary<FuzzCase>,
  seed: number,
  runs: number,
): Promise<Tried[]> {
  const cases = [...pinnedCases, ...fc.sample(arb, { seed, numRuns: runs })];
  const tried: Tried[] = [];
  for (const [i, fuzz] of cases.entries()) {
    const name = `${prefix}-${i}`;
    tried.push({ name, fuzz, admission: await admit(admin, type, ns, name, fuzz.spec, i % 2 === 0) });
  }
  const pending = (): Tried[] => tried.filter((t) => t.admission.admitted && t.settled === undefined);
  try {
    await waitFor(
      async () => {
        const list = await admin.get<{ items: ObservedStatus[] }>(resourcePath(type, { namespace: ns }));
        const byName = new Map(list.items.map((o) => [o.metadata.name, o]));
        for (const t of pending()) {
          t.last = byName.get(t.name);
          if (t.last !== undefined) t.settled = settledState(t.last);
        }
        return pending().length === 0 ? true : undefined;
      },
      { timeoutMs: settleDeadlineMs, intervalMs: 500, description: `${type.kind} batch to settle` },
    );
  } catch {
    // Reported below, object by object.
  }
  return tried;
}

/**
 * Everything wrong with a batch's outcomes, one line per object; empty when
 * all is well. `check`, the kind's own: what is wrong with where an object
 * ended given its stored spec (e.g. a missing backend that is not missing).
 */
function verdicts(
  tried: readonly Tried[],
  validMayEnd: readonly Settled['state'][],
  check?: (spec: unknown, settled: Settled) => string | undefined,
): string[] {
  const problems: string[] = [];
  for (const t of tried) {
    const what = describeCase(t.name, t.fuzz);
    const a = t.admission;
    const ended = !a.admitted ? 'rejected' : t.settled?.state;
    if (t.fuzz.expected !== undefined && ended !== t.fuzz.expected)
      problems.push(
        `ended ${ended ?? 'unsettled'} instead of ${t.fuzz.expected}: ${describeStatus(t.last)}\n  ${what}`,
      );
    if (!a.admitted) {
      if (t.fuzz.intent === 'valid')
        problems.push(`valid spec rejected (${a.status}): ${a.message}\n  ${what}`);
      else if (a.status !== 422 && a.status !== 400)
        problems.push(`rejected with HTTP ${a.status} (want 422 or 400): ${a.message}\n  ${what}`);
      else if (!namesAField.test(a.message))
        problems.push(`rejection names no field: ${a.message}\n  ${what}`);
      continue;
    }
    const s = t.settled;
    if (s === undefined) {
      problems.push(`not settled within ${settleDeadlineMs} ms: ${describeStatus(t.last)}\n  ${what}`);
      continue;
    }
    if (s.state !== 'ready') {
      const bad = unhelpfulMessage(s.state === 'missingBackend' ? withoutQuotedValues(s.message) : s.message);
      if (bad !== undefined)
        problems.push(`${s.state} message ${bad}: ${JSON.stringify(s.message)}\n  ${what}`);
      if (s.state === 'missingBackend' && !namesAField.test(s.message))
        problems.push(`${s.reason} message names no field: ${JSON.stringify(s.message)}\n  ${what}`);
    }
    const wrong = check?.(t.last?.spec, s);
    if (wrong !== undefined) problems.push(`${wrong}: ${describeStatus(t.last)}\n  ${what}`);
    if (t.fuzz.intent === 'valid' && !validMayEnd.includes(s.state))
      problems.push(`valid spec ended ${s.state}: ${describeStatus(t.last)}\n  ${what}`);
  }
  return problems;
}

/** A count of outcomes, printed so a run shows how deep the inputs got. */
function tally(tried: readonly Tried[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of tried) {
    const key = !t.admission.admitted ? `rejected-${t.admission.status}` : (t.settled?.state ?? 'unsettled');
    out[`${t.fuzz.intent}:${key}`] = (out[`${t.fuzz.intent}:${key}`] ?? 0) + 1;
  }
  return out;
}

const kinds = [
  {
    kind: 'DNSRecord',
    type: dnsRecordType,
    prefix: 'fz-dns',
    pinned: () => dnsRecordPinned(zoneName),
    arb: () => dnsRecordCases(zoneName),
    runs: 50,
    // Two generated records can share a name and type: the second one is a conflict.
    validMayEnd: ['ready', 'conflict'] as Settled['state'][],
    check: undefined,
  },
  {
    kind: 'MyIngress',
    type: myIngressType,
    prefix: 'fz-ming',
    pinned: () => myIngressPinned,
    arb: () => myIngressCases(),
    // ELBv2 calls are rate-limited to 10/s: MyIngress batches are the slowest.
    runs: 30,
    // Valid specs forward only to the namespace's Services: Ready. A hostile one naming another
    // Service or port ends ServiceNotFound/ServicePortNotFound, and only then.
    validMayEnd: ['ready'] as Settled['state'][],
    check: (spec: unknown, settled: Settled) => backendVerdict(spec, settled, fuzzServices),
  },
  {
    kind: 'ManagedDB',
    type: managedDbType,
    prefix: 'fz-mdb',
    pinned: () => managedDbPinned,
    arb: () => managedDbCases(),
    runs: 40,
    validMayEnd: ['ready'] as Settled['state'][],
    check: undefined,
  },
] as const;

describe('hostile CR content', () => {
  for (const [k, spec] of kinds.entries()) {
    it(`${spec.kind}: every generated object is rejected with a field, Ready, Terminal/Conflict or a missing backend, with a message`, async () => {
      const { seed, runs } = fuzzSettings(spec.runs);
      console.log(`${spec.kind} fuzz: seed ${seed + k} (SKYLIFT_FUZZ_SEED=${seed}), ${runs} objects`);
      const tried = await runBatch(spec.type, spec.prefix, spec.pinned(), spec.arb(), seed + k, runs);
      console.log(`${spec.kind} outcomes`, tally(tried));
      for (const t of tried.filter((x) => x.fuzz.note !== undefined))
        console.log(
          `  pinned ${t.name} (${t.fuzz.note ?? ''}): ${t.admission.admitted ? (t.settled?.state ?? 'unsettled') : `rejected ${t.admission.status}`}`,
        );
      expect(verdicts(tried, spec.validMayEnd, spec.check)).toEqual([]);
      // The batch reached past admission: a generator that only produces rejects tests nothing downstream.
      expect(tried.filter((t) => t.admission.admitted).length).toBeGreaterThan(runs / 5);
      expect(await healthProblems(operator, probe)).toEqual([]);
    });
  }

  it('still reconciles: a record created after the fuzz batches becomes Ready', async () => {
    await admin.create(resourcePath(dnsRecordType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'DNSRecord',
      metadata: { name: 'canary', namespace: ns },
      spec: { zoneName, name: 'canary', type: 'A', records: ['192.0.2.1'] },
    });
    const waited = await kubectl(stackInfo().adminKubeconfig, [
      'wait',
      '-n',
      ns,
      '--for=condition=Ready',
      'dnsrecord/canary',
      '--timeout=30s',
    ]);
    expect(waited.code, `${waited.stderr}\n${operator.output().slice(-3000)}`).toBe(0);
    expect(await healthProblems(operator, probe)).toEqual([]);
  });

  it('deletes every fuzzed object and leaves nothing in AWS', async () => {
    const types = [dnsRecordType, myIngressType, managedDbType];
    const ask = await kubectl(stackInfo().adminKubeconfig, [
      'delete',
      'dnsrecords,myingresses,manageddbs',
      '--all',
      '-n',
      ns,
      '--wait=false',
    ]);
    expect(ask.code, ask.stderr).toBe(0);
    let left: string[] = [];
    try {
      await waitFor(
        async () => {
          left = [];
          for (const type of types) {
            const list = await admin.get<{
              items: (ObservedStatus & { metadata: { finalizers?: string[] } })[];
            }>(resourcePath(type, { namespace: ns }));
            for (const o of list.items)
              left.push(
                `${type.kind}/${o.metadata.name} finalizers=${JSON.stringify(o.metadata.finalizers ?? [])}: ${describeStatus(o)}`,
              );
          }
          return left.length === 0 ? true : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 500, description: 'every fuzzed object to be deleted' },
      );
    } catch {
      // Reported below.
    }
    expect(left).toEqual([]);

    const endpoint = stackInfo().awsEndpoint;
    const r53 = route53At(endpoint);
    const records = (await listRecords(r53, zoneId)).filter((r) => r.Type !== 'NS' && r.Type !== 'SOA');
    expect(records.map((r) => `${r.Name ?? ''} ${r.Type ?? ''}`)).toEqual([]);
    await r53.send(new DeleteHostedZoneCommand({ Id: zoneId }));
    const elb = new ElasticLoadBalancingV2Client(awsClientConfig(endpoint));
    const lbs = (await elb.send(new DescribeLoadBalancersCommand({}))).LoadBalancers ?? [];
    expect(lbs.map((l) => l.LoadBalancerName ?? '').filter((n) => n.includes(ns))).toEqual([]);
    const rds = new RDSClient(awsClientConfig(endpoint));
    const dbs = (await rds.send(new DescribeDBInstancesCommand({}))).DBInstances ?? [];
    expect(dbs.map((d) => d.DBInstanceIdentifier ?? '').filter((id) => id.includes(ns))).toEqual([]);
    expect(await healthProblems(operator, probe)).toEqual([]);
    console.log('AWS calls by operation', proxy.countsByOperation());
  });
});
