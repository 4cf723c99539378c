// Two controllers may serve one kind (MyIngressGroups: the kind's own and the Gateway API's): the
// per-kind gauges read at scrape time add their counts and take the oldest wait, instead of the
// last source overwriting the first.
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/runtime/metrics.ts';

describe('per-kind gauges from several controllers of one kind', () => {
  it('sums the managed resources and takes the oldest not-ready wait', async () => {
    const metrics = new Metrics();
    metrics.managedSources.push(() => [
      { kind: 'MyIngressGroup', ready: 'True', count: 2 },
      { kind: 'MyIngressGroup', ready: 'False', count: 1 },
    ]);
    metrics.managedSources.push(() => [{ kind: 'MyIngressGroup', ready: 'True', count: 3 }]);
    metrics.notReadySources.push(() => ({ kind: 'MyIngressGroup', seconds: 40 }));
    metrics.notReadySources.push(() => ({ kind: 'MyIngressGroup', seconds: 5 }));
    const managed = await metrics.registry.getSingleMetricAsString('skylift_managed_resources');
    expect(managed).toContain('skylift_managed_resources{kind="MyIngressGroup",ready="True"} 5');
    expect(managed).toContain('skylift_managed_resources{kind="MyIngressGroup",ready="False"} 1');
    const oldest = await metrics.registry.getSingleMetricAsString('skylift_oldest_not_ready_seconds');
    expect(oldest).toContain('skylift_oldest_not_ready_seconds{kind="MyIngressGroup"} 40');
  });
});
