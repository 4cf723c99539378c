// The Gateway API conformance suite's core HTTP profile (GATEWAY-HTTP, issue 30) against Skylift
// on the node cluster, in `make test`: the same run as `make conformance` (dev/conformance.ts's
// runConformanceProfile) on the cluster the node project already has — the suite's echo backends
// as Pods on the node, its requests sent through the ALB data plane by the dial map, the operator
// in this process. The report stays in this run's directory (make conformance keeps a passing
// one in conformance/reports/). The suite checks its own expectations; this file checks that it
// passed with no failure and that the only core tests it skipped are the ones Skylift lists with a reason.
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { AlbDataPlane } from '../../dev/albDataPlane/dataPlane.ts';
import {
  conformanceProfile,
  describeSuiteOutcome,
  parseConformanceArgs,
  runConformanceProfile,
  skippedHttpCoreTests,
  suiteUnavailable,
} from '../../dev/conformance.ts';
import { dialMapFile, type DialMapFile } from '../../dev/conformanceDialMap.ts';
import { skyliftGatewayClassName } from '../../src/apis/gatewayApi.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { gatewayUidLabel } from '../../src/kinds/myingress/gateway/names.ts';
import { myIngressGroupType } from '../../src/kinds/myingress/group/api.ts';
import { startAlbDataPlane } from '../support/albDataPlane.ts';
import { kubeClient } from '../support/kube.ts';
import { stackInfo } from '../support/stack.ts';

/** The part of the suite's report (ConformanceReport) read here. */
interface ConformanceReport {
  readonly gatewayAPIVersion: string;
  readonly profiles: readonly {
    readonly name: string;
    readonly core: {
      readonly result: string;
      readonly skippedTests?: readonly string[];
      readonly statistics: { readonly Failed: number; readonly Passed: number; readonly Skipped: number };
    };
  }[];
}

const admin = kubeClient();
let dataPlane: AlbDataPlane | undefined;
let dialMap: DialMapFile | undefined;

afterAll(async () => {
  await dataPlane?.stop();
  await dialMap?.flushed();
  // The class the run applied: no later file's operator should find it.
  await admin
    .delete(`/apis/gateway.networking.k8s.io/v1/gatewayclasses/${skyliftGatewayClassName}`)
    .catch(() => undefined);
});

describe(`the Gateway API conformance suite, profile ${conformanceProfile}`, () => {
  it(
    'passes every core test but the listed skips, its requests sent through the ALB data plane',
    async () => {
      expect(suiteUnavailable()).toBeUndefined();
      const dir = join(stackInfo().dir, 'conformance');
      await mkdir(dir, { recursive: true });
      const say = (text: string): void => {
        process.stdout.write(`[conformance] ${text}\n`);
      };
      const map = await dialMapFile(join(dir, 'dial-map.json'), (err: unknown) => {
        say(`writing the dial map failed: ${String(err)}`);
      });
      dialMap = map;
      dataPlane = await startAlbDataPlane({
        onListenersChanged: (listeners) => {
          map.follow(listeners);
        },
      });
      const run = await runConformanceProfile(
        {
          kubeconfig: stackInfo().adminKubeconfig,
          awsEndpoint: stackInfo().awsEndpoint,
          dataPlane,
          dialMap: map,
          dir,
        },
        parseConformanceArgs(['--timeout', '15m']),
        { say },
      );
      if (run === 'interrupted') throw new Error('the run was interrupted');
      expect(run.outcome, describeSuiteOutcome(run.outcome, run.logPath, undefined)).toEqual({
        kind: 'passed',
      });
      // The suite picked its extended tests from what the class claims: it claimed something.
      expect(run.supportedFeatures).toEqual(expect.arrayContaining(['Gateway', 'HTTPRoute']));

      const report = parse(await readFile(run.reportOutput, 'utf8')) as ConformanceReport;
      const profile = report.profiles.find((p) => p.name === conformanceProfile);
      expect(profile, `the report has no ${conformanceProfile} profile`).toBeDefined();
      expect(profile?.core.statistics.Failed).toBe(0);
      expect(profile?.core.statistics.Passed).toBeGreaterThan(0);
      expect([...(profile?.core.skippedTests ?? [])].sort()).toEqual(
        Object.keys(skippedHttpCoreTests).sort(),
      );
      // The suite deleted its Gateways when it ended: each one's group (and load balancer) went with it.
      const groups = await admin.get<{ items: { metadata: { name: string } }[] }>(
        resourcePath(myIngressGroupType),
        {
          labelSelector: gatewayUidLabel,
        },
      );
      expect(groups.items.map((g) => g.metadata.name)).toEqual([]);
    },
    20 * 60_000,
  );
});
