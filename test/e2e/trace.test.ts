// `skylift trace` as a user runs it: the sample application managed by
// `skylift run`, traced while Ready, with an AWS error on one describe call,
// and after the record and the load balancer were deleted behind the
// operator's back.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  DeleteLoadBalancerCommand,
  DeleteTargetGroupCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { ensureElbSubnets } from '../../dev/awsAccount.ts';
import { emulatorCredentials, emulatorEnv, awsClientConfig } from '../../dev/emulator.ts';
import { repoRoot } from '../../dev/paths.ts';
import { loadSamples, sampleFile, standInEndpointSlices } from '../../dev/samples.ts';
import { waitFor } from '../../dev/wait.ts';
import { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { changeRecords, ensureZone, findRecord, listRecords, route53At } from '../support/dns.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';

interface TraceRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `skylift trace …` against the stack's apiserver and AWS at `endpoint` (default: the emulator). */
async function trace(
  args: readonly string[],
  endpoint = stackInfo().awsEndpoint,
  env: NodeJS.ProcessEnv = {},
): Promise<TraceRun> {
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'src/cli/main.ts'), 'trace', ...args, '--kubeconfig', stackInfo().adminKubeconfig],
    {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...emulatorEnv(endpoint), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

let ns: string;
let zoneId: string;
let operator: SkyliftProcess;
const kc = (): string => stackInfo().adminKubeconfig;
const jsonpath = async (ref: string, path: string): Promise<string> =>
  (await kubectl(kc(), ['get', '-n', ns, ref, '-o', `jsonpath={${path}}`])).stdout;

beforeAll(async () => {
  const admin = kubeClient();
  await installCrds(admin);
  ns = await newNamespace(admin, 'e2e-trace');
  const endpoint = stackInfo().awsEndpoint;
  await ensureElbSubnets(new EC2Client(awsClientConfig(endpoint)), emulatorCredentials.region);
  zoneId = await ensureZone(route53At(endpoint), 'example.com');
  operator = spawnSkylift(ns, endpoint, [
    '--rds-poll-interval',
    '1s',
    '--route53-batch-window',
    '300ms',
    // No resync during the test: drift stays until the trace has seen it.
    '--resync-period',
    '1h',
  ]);
  // No kubelet in the test stack: stand in for the Pods behind the Service, as skylift dev does —
  // before the samples, so the target group is created knowing its targets' port (8080, asserted
  // below) rather than the Service's, whichever the operator gets to first.
  const slices = await kubectl(
    kc(),
    ['apply', '-n', ns, '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: standInEndpointSlices(await loadSamples(), ns) }),
  );
  expect(slices.code, slices.stderr).toBe(0);
  const applied = await kubectl(kc(), ['apply', '-n', ns, '-f', sampleFile]);
  expect(applied.code, applied.stderr).toBe(0);
  for (const ref of ['myingress/shop', 'dnsrecord/shop', 'manageddb/orders']) {
    const waited = await kubectl(kc(), ['wait', '-n', ns, '--for=condition=Ready', ref, '--timeout=120s']);
    expect(waited.code, `${waited.stderr}\n${operator.output().slice(-2000)}`).toBe(0);
  }
  await waitFor(
    async () =>
      (await jsonpath('myingress/shop', '.status.targetGroups[0].registeredTargets')) === '1'
        ? true
        : undefined,
    { timeoutMs: 60_000, description: 'the stand-in endpoint registered as a target' },
  );
});

afterAll(async () => {
  // Leave the shared emulator as other files expect it: nothing of this namespace left.
  const tgArns = (await jsonpath('myingress/shop', '.status.targetGroups[*].arn'))
    .split(' ')
    .filter((a) => a !== '');
  await kubectl(kc(), ['delete', '-n', ns, '-f', sampleFile, '--timeout=120s']);
  await operator.stop();
  const elb = new ElasticLoadBalancingV2Client(awsClientConfig(stackInfo().awsEndpoint));
  for (const arn of tgArns)
    await elb.send(new DeleteTargetGroupCommand({ TargetGroupArn: arn })).catch(() => undefined);
  const r53 = route53At(stackInfo().awsEndpoint);
  const ours = (await listRecords(r53, zoneId)).filter((r) =>
    (r.ResourceRecords ?? []).some((v) => (v.Value ?? '').includes(`skylift/owner=${ns}/`)),
  );
  if (ours.length > 0)
    await changeRecords(
      r53,
      zoneId,
      ours.map((r) => ({ Action: 'DELETE', ResourceRecordSet: r })),
    );
});

describe('skylift trace', () => {
  it('shows a Ready MyIngress: load balancer, listener, rule, target group and target', async () => {
    const r = await trace(['myingress/shop', '-n', ns]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const dnsName = await jsonpath('myingress/shop', '.status.dnsName');
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^NAME\s+STATUS\s+DETAILS$/);
    expect(lines[1]).toMatch(new RegExp(`^MyIngress/shop\\s+Ready\\s+namespace=${ns}\\s+age=\\d+[smhd]$`));
    expect(r.stdout).toMatch(/^├─ Condition\/Ready\s+True\s+Available/m);
    expect(r.stdout).toMatch(/^├─ Condition\/Synced\s+True\s+ReconcileSuccess/m);
    expect(r.stdout).toMatch(
      new RegExp(
        `^└─ LoadBalancer/\\S+\\s+active\\s+dns=${dnsName.replace(/\./g, '\\.')}\\s+scheme=internet-facing$`,
        'm',
      ),
    );
    expect(r.stdout).toMatch(/^ {3}├─ Listener\/HTTP:80\s+exists\s+default: forward to \S+-web-80$/m);
    expect(r.stdout).toMatch(
      /^ {3}│ {2}└─ Rule\/priority 10\s+exists\s+path-pattern=\/old\/\*\s+→ redirect HTTP_301/m,
    );
    expect(r.stdout).toMatch(
      /^ {3}└─ TargetGroup\/\S+-web-80\s+exists\s+HTTP:8080\s+service=web:80\s+targets=1$/m,
    );
    expect(r.stdout).toMatch(/^ {6}└─ Target\/10\.77\.1\.10:8080\s+\S+/m);

    // The same, case-insensitively by short name, as JSON.
    const json = await trace(['MING/shop', '-n', ns, '-o', 'json']);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as {
      ready: boolean;
      tree: { children: { kind: string; status: string }[] };
    };
    expect(parsed.ready).toBe(true);
    expect(parsed.tree.children.map((c) => `${c.kind} ${c.status}`)).toEqual([
      'Condition True',
      'Condition True',
      'LoadBalancer active',
    ]);
  });

  it('shows a DNSRecord alias: zone, record set, ownership TXT and the MyIngress it follows', async () => {
    const r = await trace(['dnsr/shop', '-n', ns]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const dnsName = await jsonpath('myingress/shop', '.status.dnsName');
    expect(r.stdout).toMatch(new RegExp(`^├─ HostedZone/${zoneId}\\s+exists\\s+name=example\\.com\\.$`, 'm'));
    expect(r.stdout).toMatch(
      new RegExp(`^│ {2}├─ RecordSet/shop\\.example\\.com\\. A\\s+exists\\s+alias=${dnsName}`, 'm'),
    );
    expect(r.stdout).toMatch(
      new RegExp(
        `^│ {2}└─ OwnershipTXT/_skylift-owner\\.a\\.shop\\.example\\.com\\.\\s+exists\\s+owner=${ns}/shop`,
        'm',
      ),
    );
    expect(r.stdout).toMatch(/^└─ MyIngress\/shop\s+Ready\s+dns=\S+\s+the alias points here$/m);
  });

  it('shows a ManagedDB: instance with endpoint, and the connection Secret’s keys but never its values', async () => {
    const r = await trace(['ManagedDB/orders', '-n', ns]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const address = await jsonpath('manageddb/orders', '.status.endpoint.address');
    expect(r.stdout).toMatch(
      new RegExp(
        `^├─ DBInstance/\\S+\\s+available\\s+endpoint=${address.replace(/\./g, '\\.')}:5432\\s+engine=postgres`,
        'm',
      ),
    );
    expect(r.stdout).toMatch(/^└─ Secret\/orders-db\s+exists\s+keys=\S*password\S*$/m);
    const password = Buffer.from(await jsonpath('secret/orders-db', '.data.password'), 'base64').toString(
      'utf8',
    );
    expect(password.length).toBeGreaterThan(8);
    expect(r.stdout).not.toContain(password);
  });

  it('shows an AWS error on its node instead of failing, and exits 1', async () => {
    const proxy = await AwsFaultProxy.start({ target: stackInfo().awsEndpoint });
    try {
      proxy.inject({
        service: 'elasticloadbalancing',
        operation: 'DescribeTargetHealth',
        fault: {
          kind: 'error',
          status: 403,
          code: 'AccessDenied',
          message: 'not allowed to DescribeTargetHealth',
        },
      });
      const r = await trace(['ming/shop', '-n', ns], proxy.endpoint);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toMatch(
        /^ {3}└─ TargetGroup\/\S+-web-80\s+Error\s+AccessDenied: not allowed to DescribeTargetHealth$/m,
      );
      expect(r.stdout).toMatch(/^ {3}├─ Listener\/HTTP:80\s+exists/m);
    } finally {
      await proxy.stop();
    }
  });

  // Issue 14, item 6: with the AWS endpoint not answering, trace hung silently (no SDK timeout).
  it('ends with the error on its node when AWS does not answer at all, and exits 1', async () => {
    const proxy = await AwsFaultProxy.start({ target: stackInfo().awsEndpoint });
    try {
      proxy.inject({ service: 'route53', fault: { kind: 'latency', ms: 600_000 } });
      const r = await trace(['dnsr/shop', '-n', ns], proxy.endpoint, { SKYLIFT_AWS_TIMEOUT: '500ms' });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toMatch(/^├─ HostedZone\/\S+\s+Error\s+ETIMEDOUT: .*requestTimeout/m);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await proxy.stop();
    }
  });

  it('exits 2 on usage errors and 1 for a resource that does not exist', async () => {
    const unknown = await trace(['gadget/shop', '-n', ns]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown kind "gadget"');
    const noName = await trace(['ming', '-n', ns]);
    expect(noName.code).toBe(2);
    const missing = await trace(['ming/nope', '-n', ns]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`MyIngress ${ns}/nope not found`);
  });

  it('shows a record and a load balancer deleted behind the operator’s back as NotFound, and exits 1', async () => {
    const endpoint = stackInfo().awsEndpoint;
    const r53 = route53At(endpoint);
    const record = findRecord(await listRecords(r53, zoneId), 'shop.example.com', 'A');
    expect(record?.AliasTarget).toBeDefined();
    if (record !== undefined)
      await changeRecords(r53, zoneId, [{ Action: 'DELETE', ResourceRecordSet: record }]);
    const dns = await trace(['dnsrecord/shop', '-n', ns]);
    expect(dns.code, dns.stdout).toBe(1);
    expect(dns.stdout).toMatch(
      /^│ {2}├─ RecordSet\/shop\.example\.com\. A\s+NotFound\s+recorded in status but not found in AWS \(drift\)$/m,
    );
    // The CR itself still says Ready: only the live look-up sees the drift.
    expect(dns.stdout).toMatch(/^DNSRecord\/shop\s+Ready\s/m);

    const lbArn = await jsonpath('myingress/shop', '.status.arn');
    await new ElasticLoadBalancingV2Client(awsClientConfig(endpoint)).send(
      new DeleteLoadBalancerCommand({ LoadBalancerArn: lbArn }),
    );
    const ming = await trace(['myingress/shop', '-n', ns]);
    expect(ming.code, ming.stdout).toBe(1);
    expect(ming.stdout).toMatch(
      /^└─ LoadBalancer\/\S+\s+NotFound\s+recorded in status but not found in AWS \(drift\)$/m,
    );
  });
});
