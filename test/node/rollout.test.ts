// Zero-downtime rollouts through a MyIngress, counted request by request: the sample app's
// Deployment (3 replicas) on the node cluster behind a MyIngress, the operator (AWS through a fault
// proxy), and the ALB data plane serving the listener and health-checking the Pods. Load runs at 50
// requests/s through each change — rolling updates (maxSurge 1 / maxUnavailable 0, and maxSurge 0 /
// maxUnavailable 1), a scale 3→1 and 1→3, a Pod deleted — until the load balancer has settled.
//
// In a namespace with the target-health readiness gate and the documented preStop pause
// (docs/myingress.md#rollouts) no request may fail. In a namespace without either
// (the usual Deployment) the same rolling update is counted too, and must show failures: the test
// is known to be able to fail. The full matrix, gate on and off, is `make bench`'s myingress-rollout;
// both drive the changes with bench/lib/rollouts.ts.
import { CreateTagsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlbDataPlane } from '../../dev/albDataPlane/dataPlane.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { installCrds, installTargetHealthGate } from '../../dev/installCrds.ts';
import {
  deployApp,
  enableTargetHealthGate,
  removeApp,
  rolloutCases,
  rolloutGatePollPeriod,
  rolloutHealthCheckTimeScale,
  rolloutPreStopSeconds,
  runRolloutCase,
  type RolloutCase,
  type RolloutRig,
} from '../../bench/lib/rollouts.ts';
import { startAlbDataPlane } from '../support/albDataPlane.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { nodeInfo, stackInfo, startFaultProxy } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';

const SUBNET_TAG = 'skylift.test/rollout';
const admin = kubeClient();
let gated: string;
let plain: string;
let operator: SkyliftProcess | undefined;
let proxy: AwsFaultProxy | undefined;
let dp: AlbDataPlane | undefined;
let ec2: EC2Client | undefined;
let rig: RolloutRig | undefined;

/** The rig, once beforeAll made it. */
function theRig(): RolloutRig {
  if (rig === undefined) throw new Error('beforeAll did not finish');
  return rig;
}

beforeAll(async () => {
  await installCrds(admin);
  await installTargetHealthGate(admin);
  ec2 = new EC2Client(awsClientConfig(stackInfo().awsEndpoint));
  const { subnets } = await vpcWithTwoSubnets(ec2, 79);
  await ec2.send(new CreateTagsCommand({ Resources: subnets, Tags: [{ Key: SUBNET_TAG, Value: '1' }] }));
  proxy = await startFaultProxy();
  // Health checks every 0.5 s (5 s scaled); the propagation delay stays the default estimate (5 s).
  dp = await startAlbDataPlane({ proxy, healthCheckTimeScale: rolloutHealthCheckTimeScale });
  rig = {
    admin,
    kubeconfig: stackInfo().adminKubeconfig,
    elb: new ElasticLoadBalancingV2Client(awsClientConfig(proxy.endpoint)),
    dataPlane: dp,
    image: nodeInfo().helloImage,
    subnetTag: { key: SUBNET_TAG, value: '1' },
    log: (line) => process.stdout.write(`[rollout] ${line}\n`),
  };
  gated = await newNamespace(admin, 'rollout-gated');
  await enableTargetHealthGate(rig, gated);
  plain = await newNamespace(admin, 'rollout-plain');
  operator = spawnSkylift(`${gated},${plain}`, proxy.endpoint, [
    '--target-health-gate-poll-period',
    rolloutGatePollPeriod,
  ]);
});

afterAll(async () => {
  if (rig !== undefined) for (const ns of [gated, plain]) await removeApp(rig, ns);
  await operator?.stop();
  await dp?.stop();
  await proxy?.stop();
  rig?.elb.destroy();
  ec2?.destroy();
});

describe('rollouts through a MyIngress', () => {
  it('with the readiness gate and the preStop pause, no request fails', async () => {
    const app = await deployApp(theRig(), gated, rolloutPreStopSeconds);
    const results: Partial<Record<RolloutCase, number>> = {};
    for (const which of rolloutCases)
      results[which] = (await runRolloutCase(theRig(), gated, app, which)).failed;
    expect(results).toEqual({
      'rolling maxSurge 1 / maxUnavailable 0': 0,
      'rolling maxSurge 0 / maxUnavailable 1': 0,
      'scale 3→1': 0,
      'scale 1→3': 0,
      'a Pod deleted': 0,
    });
  });

  it('without them, the same rolling update fails requests (the test can tell)', async () => {
    const app = await deployApp(theRig(), plain, undefined);
    const r = await runRolloutCase(
      theRig(),
      plain,
      app,
      'rolling maxSurge 1 / maxUnavailable 0',
      'rolling maxSurge 1 / maxUnavailable 0 (no gate, no preStop)',
    );
    expect(r.failed).toBeGreaterThan(0);
  });
});
