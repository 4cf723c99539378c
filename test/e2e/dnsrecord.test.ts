// DNSRecord the way a user meets it: `skylift run` as a process, the examples
// applied with kubectl, `kubectl wait`, `kubectl get`, `kubectl explain`,
// `kubectl delete`, and Route 53 (moto) checked directly.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { repoRoot } from '../../dev/paths.ts';
import { waitFor } from '../../dev/wait.ts';
import { ensureZone, findRecord, listRecords, route53At } from '../support/dns.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';

let operator: SkyliftProcess;

afterAll(async () => {
  await operator.stop();
});

let ns: string;
let zoneId: string;
beforeAll(async () => {
  const admin = kubeClient();
  await installCrds(admin);
  ns = await newNamespace(admin, 'e2e-dns');
  zoneId = await ensureZone(route53At(stackInfo().awsEndpoint), 'example.com');
  operator = spawnSkylift(ns, stackInfo().awsEndpoint, ['--route53-batch-window', '300ms']);
  await waitFor(() => (operator.output().includes('controllers started') ? true : undefined), {
    timeoutMs: 30_000,
    description: 'skylift run to start',
  });
});

describe('DNSRecord with kubectl', () => {
  it('applies the example, waits for Ready, shows columns, and deletes the records', async () => {
    const kc = stackInfo().adminKubeconfig;
    const example = join(repoRoot, 'examples/dnsrecord.yaml');
    const applied = await kubectl(kc, ['apply', '-n', ns, '-f', example]);
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toContain('dnsrecord.aws.skylift.dev/www created');

    const waited = await kubectl(kc, [
      'wait',
      '-n',
      ns,
      '--for=condition=Ready',
      'dnsrecord',
      '--all',
      '--timeout=90s',
    ]);
    expect(waited.code, `${waited.stderr}\n--- operator ---\n${operator.output().slice(-3000)}`).toBe(0);

    const get = await kubectl(kc, ['get', 'dnsr', '-n', ns]);
    expect(get.stdout).toMatch(/NAME\s+TYPE\s+FQDN\s+READY\s+SYNCED\s+AGE/);
    expect(get.stdout).toMatch(/www\s+A\s+www\.example\.com\.\s+True\s+True/);
    const all = await kubectl(kc, ['get', 'skylift', '-n', ns, '-o', 'name']);
    expect(all.stdout.trim().split('\n').sort()).toEqual([
      'dnsrecord.aws.skylift.dev/docs',
      'dnsrecord.aws.skylift.dev/site-verification',
      'dnsrecord.aws.skylift.dev/www',
    ]);
    const explain = await kubectl(kc, ['explain', 'dnsrecord.spec.zoneName']);
    expect(explain.stdout).toContain('Hosted zone name');

    const r53 = route53At(stackInfo().awsEndpoint);
    let records = await listRecords(r53, zoneId);
    expect(
      findRecord(records, 'www.example.com', 'A')
        ?.ResourceRecords?.map((r) => r.Value)
        .sort(),
    ).toEqual(['192.0.2.10', '192.0.2.11']);
    expect(findRecord(records, 'docs.example.com', 'CNAME')?.ResourceRecords).toEqual([
      { Value: 'www.example.com' },
    ]);
    expect(
      findRecord(records, 'example.com', 'TXT')
        ?.ResourceRecords?.map((r) => r.Value)
        .sort(),
    ).toEqual(['"google-site-verification=abc123"', '"v=spf1 -all"']);

    const deleted = await kubectl(kc, ['delete', '-n', ns, '-f', example, '--timeout=90s']);
    expect(deleted.code, deleted.stderr).toBe(0);
    records = await listRecords(r53, zoneId);
    expect(records.filter((r) => r.Type !== 'NS' && r.Type !== 'SOA')).toEqual([]);
  });

  it('applies the alias example: a direct alias becomes Ready, a MyIngress alias waits for its reference', async () => {
    const kc = stackInfo().adminKubeconfig;
    const example = join(repoRoot, 'examples/dnsrecord-alias.yaml');
    expect((await kubectl(kc, ['apply', '-n', ns, '-f', example])).code).toBe(0);
    const waited = await kubectl(kc, [
      'wait',
      '-n',
      ns,
      '--for=condition=Ready',
      'dnsrecord/apex',
      '--timeout=90s',
    ]);
    expect(waited.code, `${waited.stderr}\n--- operator ---\n${operator.output().slice(-3000)}`).toBe(0);
    const reason = await kubectl(kc, [
      'wait',
      '-n',
      ns,
      '--for=jsonpath={.status.conditions[?(@.type=="Ready")].reason}=WaitingForReference',
      'dnsrecord/shop',
      '--timeout=60s',
    ]);
    expect(reason.code, reason.stderr).toBe(0);
    const alias = findRecord(
      await listRecords(route53At(stackInfo().awsEndpoint), zoneId),
      'example.com',
      'A',
    )?.AliasTarget;
    expect(alias?.HostedZoneId).toBe('Z35SXDOTRQ7X7K');
    expect((await kubectl(kc, ['delete', '-n', ns, '-f', example, '--timeout=90s'])).code).toBe(0);
    expect(
      findRecord(await listRecords(route53At(stackInfo().awsEndpoint), zoneId), 'example.com', 'A'),
    ).toBeUndefined();
  });

  it('rejects a bad record at admission with a message a user can act on', async () => {
    const bad = JSON.stringify({
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'DNSRecord',
      metadata: { name: 'bad', namespace: ns },
      spec: { zoneName: 'example.com', name: '@', type: 'CNAME', records: ['elsewhere.example.net'] },
    });
    const r = await kubectl(stackInfo().adminKubeconfig, ['apply', '-f', '-'], bad);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('a CNAME cannot be at the zone apex');
  });
});
