// A kind's AWS SDK is loaded by its first object (issue 16): `skylift run` serving only a DNSRecord
// loads the Route 53 SDK and never those of ELBv2, RDS or EC2, which cost memory a DNS-only
// cluster would not use. Checked on the modules the real operator process resolved (recorded by
// test/support/recordModules.ts, preloaded with NODE_OPTIONS=--import); importing the operator
// loads no SDK at all (test/unit/operatorImports.test.ts).
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { emulatorEnv } from '../../dev/emulator.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { repoRoot } from '../../dev/paths.ts';
import { createDnsRecord, createZone, route53At, waitForCondition } from '../support/dns.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { spawnSkyliftRun, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';

let operator: SkyliftProcess | undefined;
afterEach(async () => {
  await operator?.stop();
  operator = undefined;
});

/** Which of `packages` the recorded module URLs come from. */
function packagesIn(urls: readonly string[], packages: readonly string[]): string[] {
  return packages.filter((p) => urls.some((u) => u.includes(`/node_modules/${p}/`)));
}

describe('the AWS SDKs of skylift run', () => {
  it('serving one DNSRecord loads the Route 53 SDK and none of ELBv2, RDS, EC2, WAFv2 or Tagging', async () => {
    const admin = kubeClient();
    await installCrds(admin);
    const ns = await newNamespace(admin, 'e2e-sdk');
    const zone = `${ns}.example.com`;
    await createZone(route53At(stackInfo().awsEndpoint), zone);
    const recorded = join(await mkdtemp(join(tmpdir(), 'skylift-sdk-')), 'modules.json');
    const hook = pathToFileURL(join(repoRoot, 'test', 'support', 'recordModules.ts')).href;
    operator = spawnSkyliftRun({
      args: ['--namespaces', ns, '--leader-elect=false', '--route53-batch-window', '200ms'],
      env: {
        ...emulatorEnv(stackInfo().awsEndpoint),
        NODE_OPTIONS: `--import=${hook}`,
        SKYLIFT_LOADED_MODULES: recorded,
      },
    });
    await createDnsRecord(admin, ns, 'www', {
      zoneName: zone,
      name: 'www',
      type: 'A',
      ttl: 60,
      records: ['192.0.2.10'],
    });
    await waitForCondition(admin, ns, 'www', { type: 'Ready', status: 'True' }, 60_000);
    await operator.stop();
    expect(operator.child.exitCode, operator.output()).toBe(0);
    const urls = JSON.parse(await readFile(recorded, 'utf8')) as string[];
    const sdks = [
      '@aws-sdk/client-route-53',
      '@aws-sdk/client-elastic-load-balancing-v2',
      '@aws-sdk/client-rds',
      '@aws-sdk/client-ec2',
      '@aws-sdk/client-wafv2',
      '@aws-sdk/client-resource-groups-tagging-api',
    ];
    expect(packagesIn(urls, sdks)).toEqual(['@aws-sdk/client-route-53']);
  });
});
