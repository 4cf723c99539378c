// `make bench`'s shared load balancer scenarios (issue 30): `myingress-group` (MyIngressGroups and
// their member MyIngresses) and `gateway` (one Gateway and its HTTPRoutes), on the run's local
// stack, the operator as its own process watching every namespace (members are spread over
// namespaces) behind the counting proxy. Measures the time until every member is Ready (every route
// Accepted) at its generation and every group Ready with all its members (the Gateway Programmed
// with every route attached), the load balancers ELBv2 then holds, the ELBv2 calls per member, one
// no-op resync window, one member's rule changed (its calls by operation until it is Ready at the
// new generation, and whether ELBv2 has the new path), and the deletion: members, then the groups
// (the Gateway), until nothing Skylift tagged is left in ELBv2 or EC2.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import { emulatorEnv } from '../../dev/emulator.ts';
import { installGatewayApiCrds } from '../../dev/installCrds.ts';
import { typeOf } from '../../dev/samples.ts';
import { waitFor } from '../../dev/wait.ts';
import { resourcePath, type KubeObject, type ResourceType } from '../../src/apis/meta.ts';
import { gatewayType, httpRouteType } from '../../src/apis/gatewayApi.ts';
import { myIngressType } from '../../src/kinds/myingress/api.ts';
import { myIngressGroupType } from '../../src/kinds/myingress/group/api.ts';
import { myIngressGroupKind } from '../../src/kinds/myingress/group/index.ts';
import { gatewayGroupName } from '../../src/kinds/myingress/gateway/names.ts';
import { KubeApiError } from '../../src/runtime/kube/client.ts';
import { ensureGatewayClass } from '../lifecycle/world.ts';
import type {
  Elbv2Calls,
  PhaseResult,
  ScenarioResult,
  SharedLbInventory,
  SharedLbResult,
} from '../report.ts';
import { operatorFlags, operatorUse, phase, snapshot, type BenchContext } from '../runner.ts';
import type { Scenario } from '../scenarios.ts';
import { countAwsResources, ensureSubnets } from './awsAccount.ts';
import { childArns, collectInventory, findLingeringChildren, listenerRules } from './awsInventory.ts';
import { forEachLimit } from './concurrency.ts';
import { requestTiming } from './costPerObject.ts';
import type { SkyliftInventory } from './invariants.ts';
import { startOperator, type OperatorProcess } from './operatorProcess.ts';
import { memberDone, parentDone, sharedLbCounts, sharedLbPlan, type SharedLbPlan } from './sharedLbPlan.ts';
import { WatchedObjects } from './watchedObjects.ts';

/** Deadline of each wait of a shared scenario: generous, growing with the members. */
export function sharedPhaseTimeoutMs(scenario: Scenario): number {
  return 180_000 + scenario.size * 600;
}

/** ELBv2's prefix in the proxy's `service:Operation` keys. */
const elbv2Prefix = 'elasticloadbalancing:';

/** The ELBv2 calls of a phase, per member and by operation. Pure. */
export function elbv2Calls(p: PhaseResult, members: number): Elbv2Calls {
  const byOperation: Record<string, number> = {};
  for (const [op, n] of Object.entries(p.aws.byOperation ?? {}))
    if (op.startsWith(elbv2Prefix)) byOperation[op.slice(elbv2Prefix.length)] = n;
  const total = Object.values(byOperation).reduce((a, b) => a + b, 0);
  return { total, perMember: members > 0 ? Math.round((total / members) * 100) / 100 : 0, byOperation };
}

/** The counts of a Skylift inventory. Pure. */
export function inventoryCounts(inv: SkyliftInventory): SharedLbInventory {
  return {
    loadBalancers: inv.loadBalancers.length,
    listeners: inv.loadBalancers.reduce((n, lb) => n + lb.listeners.length, 0),
    rules: inv.loadBalancers.reduce(
      (n, lb) => n + lb.listeners.reduce((m, l) => m + l.ruleArns.length, 0),
      0,
    ),
    targetGroups: inv.targetGroups.length,
    securityGroups: inv.securityGroups?.length ?? 0,
  };
}

async function createIgnoringConflict(ctx: BenchContext, type: ResourceType, obj: KubeObject): Promise<void> {
  try {
    await ctx.admin.create(resourcePath(type, { namespace: obj.metadata.namespace }), obj);
  } catch (err) {
    if (!(err instanceof KubeApiError && err.statusCode === 409)) throw err;
  }
}

async function deleteIgnoringMissing(ctx: BenchContext, type: ResourceType, obj: KubeObject): Promise<void> {
  try {
    await ctx.admin.delete(
      resourcePath(type, { namespace: obj.metadata.namespace, name: obj.metadata.name }),
    );
  } catch (err) {
    if (!(err instanceof KubeApiError && err.statusCode === 404)) throw err;
  }
}

/** Whether the cluster still has `path`; a 404 means gone. */
async function exists(ctx: BenchContext, path: string): Promise<boolean> {
  try {
    await ctx.admin.get(path);
    return true;
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404) return false;
    throw err;
  }
}

/** Every path-pattern value of the non-default rules of `listenerArns`, straight from ELBv2. */
async function pathPatterns(
  elbv2: ElasticLoadBalancingV2Client,
  listenerArns: readonly string[],
): Promise<string[]> {
  const out: string[] = [];
  for (const arn of listenerArns) {
    for (const r of await listenerRules(elbv2, arn))
      for (const c of r.Conditions ?? [])
        if (c.Field === 'path-pattern') out.push(...(c.PathPatternConfig?.Values ?? c.Values ?? []));
  }
  return out;
}

/** The member (route) changed: its new path in ELBv2, the old one gone, on any of Skylift's listeners. */
async function changeApplied(ctx: BenchContext, inv: SkyliftInventory, plan: SharedLbPlan): Promise<boolean> {
  const listeners = inv.loadBalancers.flatMap((lb) => lb.listeners.map((l) => l.arn));
  const paths = await pathPatterns(ctx.aws.elbv2, listeners);
  return paths.includes(plan.change.toPath) && !paths.includes(plan.change.fromPath);
}

/** The kinds of a front: its members' and its parents'. */
function typesOf(front: SharedLbPlan['front']): { member: ResourceType; parent: ResourceType } {
  return front === 'gateway'
    ? { member: httpRouteType, parent: gatewayType }
    : { member: myIngressType, parent: myIngressGroupType };
}

/**
 * Runs a shared load balancer scenario start to finish; a failure is the result's `error` (after a
 * best-effort cleanup), never thrown. Broken invariants (load balancers ≠ groups, the change not in
 * ELBv2, anything left after deletion) fail the scenario with every figure still recorded.
 */
export async function runSharedLbScenario(ctx: BenchContext, scenario: Scenario): Promise<ScenarioResult> {
  const { admin, proxy, settings } = ctx;
  const shape = scenario.group.shared;
  const base = {
    id: scenario.id,
    group: scenario.group.name,
    kind: scenario.group.type.kind,
    size: scenario.size,
    zones: 0,
    route53RatePerSecond: null,
  };
  if (shape === undefined) throw new Error(`${scenario.id}: not a shared load balancer scenario`);
  const timeoutMs = sharedPhaseTimeoutMs(scenario);
  const counts = sharedLbCounts(shape, scenario.size);
  const prefix = `bench-${scenario.id}-${randomBytes(3).toString('hex')}`;
  const plan = sharedLbPlan(scenario, prefix);
  const types = typesOf(plan.front);
  const gatewayNamespace = plan.front === 'gateway' ? plan.parents[0]?.metadata.namespace : undefined;
  const n = plan.members.length;
  const partial: {
    -readonly [
      K in 'create' | 'resync' | 'delete' | 'steadyState' | 'operator' | 'leftovers'
    ]?: ScenarioResult[K];
  } = {};
  const madeNamespaces: string[] = [];
  let members: WatchedObjects | undefined;
  let parents: WatchedObjects | undefined;
  let operator: OperatorProcess | undefined;
  let deleted = false;

  await ctx.stack.emulator.reset();
  proxy.clearFaults();
  proxy.resetCalls();
  try {
    await ensureSubnets(ctx.aws);
    if (plan.front === 'gateway') {
      // Before the operator starts: it serves Gateways when the cluster serves the Gateway API then.
      await installGatewayApiCrds(admin);
      await ensureGatewayClass(admin);
    }
    await forEachLimit(plan.namespaces, settings.concurrency, async (ns) => {
      await admin.create('/api/v1/namespaces', { metadata: { name: ns } });
      madeNamespaces.push(ns);
    });
    await forEachLimit(plan.supporting, settings.concurrency, (obj) =>
      createIgnoringConflict(ctx, typeOf(obj), obj),
    );
    const membersOf = new Map<string, number>();
    for (const m of plan.members) {
      const g = (m as KubeObject & { spec?: { group?: { name?: string } } }).spec?.group?.name ?? '';
      membersOf.set(g, (membersOf.get(g) ?? 0) + 1);
    }
    const watchedMembers = new WatchedObjects(admin, types.member, (o) =>
      memberDone(plan.front, o, gatewayNamespace),
    );
    members = watchedMembers;
    const watchedParents = new WatchedObjects(admin, types.parent, (o) =>
      parentDone(plan.front, o, plan.front === 'gateway' ? undefined : (membersOf.get(o.metadata.name) ?? 0)),
    );
    parents = watchedParents;
    await watchedMembers.start();
    await watchedParents.start();

    // Every namespace, as the chart installs it (a list would run one watch per namespace and kind);
    // the Gateway's load balancer in the subnets ensureSubnets tags, as skylift dev places it.
    operator = await startOperator({
      args: [...operatorFlags(settings), ...myIngressGroupKind.devFlags],
      kubeconfig: ctx.stack.kubeconfig,
      env: emulatorEnv(proxy.endpoint),
      logFile: join(ctx.logDir, `${scenario.id}.operator.log`),
      entry: ctx.operatorEntry,
      nodeFlags: settings.operatorNodeFlags,
    });
    const op = operator;

    let gatewayProgrammed: PhaseResult | undefined;
    if (plan.front === 'gateway') {
      const gw = plan.parents[0] as KubeObject;
      ctx.say(`${scenario.id}: creating the Gateway`);
      const g0 = await snapshot(proxy, op);
      const tg = performance.now();
      watchedParents.markCreated(gw, tg);
      await createIgnoringConflict(ctx, types.parent, gw);
      const programmed = await watchedParents.waitAllDone([gw], timeoutMs, 'Gateway Programmed');
      gatewayProgrammed = phase(g0, await snapshot(proxy, op), 1, programmed - tg);
      ctx.say(
        `${scenario.id}: Gateway Programmed after ${(gatewayProgrammed.durationMs / 1000).toFixed(1)} s`,
      );
    }

    ctx.say(
      `${scenario.id}: creating ${plan.front === 'gateway' ? `${n} HTTPRoutes` : `${plan.parents.length} MyIngressGroups and ${n} MyIngresses`} in ${counts.namespaces} namespaces`,
    );
    const s0 = await snapshot(proxy, op);
    const t0 = performance.now();
    if (plan.front === 'myingress-group')
      for (const g of plan.parents) {
        watchedParents.markCreated(g);
        await createIgnoringConflict(ctx, types.parent, g);
      }
    await forEachLimit(plan.members, settings.concurrency, async (m) => {
      watchedMembers.markCreated(m);
      await createIgnoringConflict(ctx, types.member, m);
    });
    const lastAnswered = performance.now();
    const membersDone = await watchedMembers.waitAllDone(
      plan.members,
      timeoutMs,
      plan.front === 'gateway'
        ? 'HTTPRoutes Accepted at their generation'
        : 'MyIngresses Ready at their generation',
    );
    const parentsDone =
      plan.front === 'gateway'
        ? await watchedParents.waitUntil(
            plan.parents[0] as KubeObject,
            (o) => parentDone(plan.front, o, n),
            timeoutMs,
            `the Gateway Programmed with ${n} routes attached`,
          )
        : await watchedParents.waitAllDone(
            plan.parents,
            timeoutMs,
            'MyIngressGroups Ready with all members Attached',
          );
    const lastDone = Math.max(membersDone, parentsDone);
    const s1 = await snapshot(proxy, op);
    partial.create = phase(
      s0,
      s1,
      n,
      lastDone - t0,
      watchedMembers.doneLatencies(),
      requestTiming({ firstRequestAt: t0, lastAnsweredAt: lastAnswered, lastDoneAt: lastDone }),
    );
    const inventory = () =>
      collectInventory(
        { elbv2: ctx.aws.elbv2, rds: ctx.aws.rds, route53: ctx.aws.route53, ec2: ctx.aws.ec2 },
        { zones: [] },
      );
    const created = await inventory();
    const afterCreate = inventoryCounts(created);
    const violations: string[] = [];
    if (afterCreate.loadBalancers !== counts.groups)
      violations.push(`${afterCreate.loadBalancers} load balancers in ELBv2, not ${counts.groups}`);
    ctx.say(
      `${scenario.id}: all done after ${(partial.create.durationMs / 1000).toFixed(1)} s: ${afterCreate.loadBalancers} load balancers, ${afterCreate.rules} rules, ${afterCreate.targetGroups} target groups; measuring one resync period`,
    );

    await delay(settings.idleWindowMs);
    const s2 = await snapshot(proxy, op);
    partial.resync = phase(s1, s2, n, s2.at - s1.at);
    partial.steadyState = {
      awsCallsPerMinute: Math.round((partial.resync.aws.total * 60_000) / partial.resync.durationMs),
      cpuSecondsPerMinute:
        Math.round(((partial.resync.cpuSeconds * 60_000) / partial.resync.durationMs) * 100) / 100,
    };

    // One member's rule changed: its calls until it is Ready (Accepted) at the new generation.
    const target = plan.change.member;
    const targetId = `${target.metadata.namespace ?? ''}/${target.metadata.name}`;
    ctx.say(`${scenario.id}: changing ${targetId}'s path ${plan.change.fromPath} → ${plan.change.toPath}`);
    const c0 = await snapshot(proxy, op);
    const tc = performance.now();
    const patched = await admin.patch<KubeObject>(
      resourcePath(types.member, { namespace: target.metadata.namespace, name: target.metadata.name }),
      plan.change.patch,
      'merge',
    );
    const generation = patched.metadata.generation;
    const changeDone = await watchedMembers.waitUntil(
      target,
      (o) => o.metadata.generation === generation && memberDone(plan.front, o, gatewayNamespace),
      timeoutMs,
      `${targetId} done at generation ${String(generation)}`,
    );
    const changePhase = phase(c0, await snapshot(proxy, op), 1, changeDone - tc);
    const appliedInAws = await changeApplied(ctx, created, plan);
    if (!appliedInAws)
      violations.push(
        `ELBv2 does not have ${plan.change.toPath} instead of ${plan.change.fromPath} after the change`,
      );
    ctx.say(
      `${scenario.id}: changed in ${(changePhase.durationMs / 1000).toFixed(1)} s, ${elbv2Calls(changePhase, 1).total} ELBv2 calls; deleting`,
    );

    // Deletion: the members (routes), then the groups (the Gateway).
    const d0 = await snapshot(proxy, op);
    const td = performance.now();
    await forEachLimit(plan.members, settings.concurrency, (m) =>
      deleteIgnoringMissing(ctx, types.member, m),
    );
    const lastDeleteAnswered = performance.now();
    deleted = true;
    const membersGone = await watchedMembers.waitAllGone(plan.members, timeoutMs, types.member.kind);
    const memberResourcesGone = await waitFor(
      async () => ((await countAwsResources(ctx.aws, [])).targetGroups === 0 ? performance.now() : undefined),
      { timeoutMs, intervalMs: 250, description: 'every target group deleted' },
    );
    await forEachLimit(plan.parents, settings.concurrency, (p) =>
      deleteIgnoringMissing(ctx, types.parent, p),
    );
    await watchedParents.waitAllGone(plan.parents, timeoutMs, types.parent.kind);
    const gatewayGroup =
      gatewayNamespace === undefined
        ? undefined
        : resourcePath(myIngressGroupType, {
            name: gatewayGroupName(gatewayNamespace, plan.parents[0]?.metadata.name ?? ''),
          });
    const allGone = await waitFor(
      async () =>
        (gatewayGroup === undefined || !(await exists(ctx, gatewayGroup))) &&
        (await countAwsResources(ctx.aws, [])).loadBalancers === 0
          ? performance.now()
          : undefined,
      { timeoutMs, intervalMs: 250, description: 'every load balancer deleted' },
    );
    const d1 = await snapshot(proxy, op);
    partial.delete = phase(
      d0,
      d1,
      n,
      allGone - td,
      undefined,
      requestTiming({ firstRequestAt: td, lastAnsweredAt: lastDeleteAnswered, lastDoneAt: allGone }),
    );
    partial.operator = operatorUse(d1.proc, n, { afterCreate: s1.proc, afterResync: s2.proc });
    const left = await inventory();
    const lingeringChildren = (await findLingeringChildren(ctx.aws.elbv2, childArns(created.loadBalancers)))
      .length;
    const leftovers = { ...inventoryCounts(left), lingeringChildren };
    for (const [what, count] of Object.entries(leftovers))
      if (count !== 0) violations.push(`${count} ${what} left after deletion`);
    partial.leftovers = await countAwsResources(ctx.aws, []);
    const createLoadBalancerCalls = proxy.count({
      service: 'elasticloadbalancing',
      operation: 'CreateLoadBalancer',
    });
    if (createLoadBalancerCalls !== counts.groups)
      violations.push(`${createLoadBalancerCalls} CreateLoadBalancer calls, not ${counts.groups}`);

    const shared: SharedLbResult = {
      front: plan.front,
      groups: counts.groups,
      members: n,
      namespaces: counts.namespaces,
      ...(gatewayProgrammed !== undefined ? { gatewayProgrammed } : {}),
      allMembersDoneMs: Math.round(membersDone - t0),
      allParentsDoneMs: Math.round(parentsDone - t0),
      afterCreate,
      createLoadBalancerCalls,
      createElbv2: elbv2Calls(partial.create, n),
      change: {
        member: targetId,
        fromPath: plan.change.fromPath,
        toPath: plan.change.toPath,
        phase: changePhase,
        elbv2: elbv2Calls(changePhase, 1),
        appliedInAws,
      },
      deletion: {
        membersGoneMs: Math.round(membersGone - td),
        memberResourcesGoneMs: Math.round(memberResourcesGone - td),
        allGoneMs: Math.round(allGone - td),
        elbv2: elbv2Calls(partial.delete, n),
      },
      leftovers,
      violations,
    };
    ctx.say(
      `${scenario.id}: done${violations.length > 0 ? `, with broken invariants: ${violations.join('; ')}` : ''}`,
    );
    return {
      ...base,
      status: violations.length === 0 ? 'ok' : 'failed',
      ...(violations.length > 0 ? { error: violations.join('; ') } : {}),
      readyCount: watchedMembers.doneCount(plan.members),
      ...partial,
      shared,
    };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    ctx.say(`${scenario.id}: FAILED: ${message}`);
    if (operator !== undefined) {
      const s = await operator.sample().catch(() => undefined);
      if (s !== undefined) partial.operator = operatorUse(s, n);
      if (!deleted) {
        // Best effort, so the next scenario starts from a clean account (it also resets moto).
        await forEachLimit(plan.members, settings.concurrency, (m) =>
          deleteIgnoringMissing(ctx, types.member, m),
        ).catch(() => undefined);
        await members?.waitAllGone(plan.members, 60_000, types.member.kind).catch(() => undefined);
      }
      await forEachLimit(plan.parents, settings.concurrency, (p) =>
        deleteIgnoringMissing(ctx, types.parent, p),
      ).catch(() => undefined);
      await parents?.waitAllGone(plan.parents, 60_000, types.parent.kind).catch(() => undefined);
    }
    return {
      ...base,
      status: 'failed',
      error: `${message}\n--- operator log tail ---\n${operator?.tail() ?? ''}`,
      readyCount: members?.doneCount(plan.members) ?? 0,
      ...partial,
    };
  } finally {
    await operator?.stop();
    // What could not be deleted keeps its finalizer with no operator left: let it go, so no
    // namespace stays Terminating under the next scenario.
    const stuck: { type: ResourceType; obj: KubeObject }[] = [
      ...(members?.present(plan.members) ?? []).map((obj) => ({ type: types.member, obj })),
      ...(parents?.present(plan.parents) ?? []).map((obj) => ({ type: types.parent, obj })),
    ];
    if (gatewayNamespace !== undefined)
      stuck.push({
        type: myIngressGroupType,
        obj: {
          metadata: { name: gatewayGroupName(gatewayNamespace, plan.parents[0]?.metadata.name ?? '') },
        },
      });
    for (const { type, obj } of stuck)
      await admin
        .patch(
          resourcePath(type, { namespace: obj.metadata.namespace, name: obj.metadata.name }),
          { metadata: { finalizers: null } },
          'merge',
        )
        .catch(() => undefined);
    await forEachLimit(plan.parents, settings.concurrency, (p) =>
      deleteIgnoringMissing(ctx, types.parent, p),
    ).catch(() => undefined);
    await members?.stop();
    await parents?.stop();
    await forEachLimit(madeNamespaces, settings.concurrency, (ns) =>
      admin.delete(`/api/v1/namespaces/${ns}`).then(
        () => undefined,
        () => undefined,
      ),
    );
  }
}
