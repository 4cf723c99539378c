// What commands use to act on the world and to wait for it: creating and
// patching objects, and settling — waiting until every invariant holds,
// failing at once when a safety invariant breaks and with the list of what is
// still not true when the deadline passes.
import { apiGroup, apiVersion } from '../../src/apis/crd.ts';
import { AbortWait, waitFor } from '../../dev/wait.ts';
import { KubeApiError } from '../../src/runtime/kube/client.ts';
import { normalizeName } from '../../src/providers/route53/names.ts';
import { describeState, judge, outageInvariant, outageProblem, type Verdict } from './invariants.ts';
import { gatewayApiGroup } from '../../src/apis/gatewayApi.ts';
import { gatewayGroupName } from '../../src/kinds/myingress/gateway/names.ts';
import type { Host, LifecycleKind, LifecycleModel, ModelObject, ObjectKind } from './model.ts';
import type { LifecycleWorld, Observed } from './world.ts';

/** How long a step may take to settle before the run fails. */
export const defaultSettleMs = 60_000;
/** How long an object may take to report that AWS does not answer. */
const unreachableWithinMs = 30_000;

/** Thrown when the real system contradicts the model; the message says what and where. */
export class LifecycleViolation extends Error {
  override readonly name = 'LifecycleViolation';
}

/** The real side handed to every command. */
export class LifecycleRunner {
  /** Steps that settled, and how long each took. */
  readonly settleTimes: number[] = [];

  readonly world: LifecycleWorld;
  private readonly settleMs: number;

  constructor(world: LifecycleWorld, settleMs: number = defaultSettleMs) {
    this.world = world;
    this.settleMs = settleMs;
  }

  /** Creates a Skylift or Gateway API object and records its uid in the model. */
  async create(
    m: LifecycleModel,
    kind: ObjectKind,
    name: string,
    spec: Record<string, unknown>,
  ): Promise<void> {
    const group =
      kind === 'Gateway' || kind === 'HTTPRoute' ? `${gatewayApiGroup}/v1` : `${apiGroup}/${apiVersion}`;
    const created = await this.world.admin.create<{ metadata: { uid?: string } }>(this.world.path(kind), {
      apiVersion: group,
      kind,
      metadata: { name },
      spec,
    });
    m.uids.set(name, created.metadata.uid ?? '');
  }

  /**
   * Creates a DNSRecord for a host in the current zone (adopting its record through
   * spec.externalName when `adopt`) and adds it to the model. Returns its name.
   */
  async createDnsRecord(
    m: LifecycleModel,
    o: { host: Host; values: readonly string[]; deletionPolicy?: 'Delete' | 'Orphan'; adopt?: boolean },
  ): Promise<string> {
    const name = `d${++m.created}`;
    const deletionPolicy = o.deletionPolicy ?? 'Delete';
    const adopt = o.adopt ?? false;
    await this.create(m, 'DNSRecord', name, {
      zoneName: this.world.zoneName,
      name: o.host,
      type: 'A',
      ttl: 300,
      records: o.values,
      deletionPolicy,
      ...(adopt ? { externalName: `${this.world.fqdn(o.host)}/A` } : {}),
    });
    m.live.set(name, { kind: 'DNSRecord', name, host: o.host, values: o.values, deletionPolicy, adopt });
    return name;
  }

  /**
   * Deletes a live object and moves it to the model's deleted list with its deletion policy
   * (`policy` overrides the object's, e.g. after patching it); an Orphan DNSRecord's host may
   * keep a record nobody owns.
   */
  async deleteObject(
    m: LifecycleModel,
    obj: ModelObject,
    policy?: 'Delete' | 'Orphan',
  ): Promise<'Delete' | 'Orphan'> {
    const deletionPolicy =
      policy ?? (obj.kind === 'DNSRecord' || obj.kind === 'ManagedDB' ? obj.deletionPolicy : 'Delete');
    await this.world.deleteQuietly(this.world.path(obj.kind, obj.name));
    m.live.delete(obj.name);
    m.deleted.push({ kind: obj.kind, name: obj.name, uid: m.uids.get(obj.name) ?? '', deletionPolicy });
    if (obj.kind === 'DNSRecord' && deletionPolicy === 'Orphan') m.orphanedHosts.add(obj.host);
    return deletionPolicy;
  }

  /** Merge-patches an object. */
  async patch(kind: ObjectKind, name: string, body: Record<string, unknown>): Promise<void> {
    await this.world.admin.patch(this.world.path(kind, name), body, 'merge');
  }

  /** The values of the A record at the host in the current zone (sorted), or undefined. */
  async recordValues(host: Host): Promise<string[] | undefined> {
    const o = await this.world.observe();
    const want = normalizeName(this.world.fqdn(host));
    const r = o.records.find((x) => normalizeName(x.Name ?? '') === want && x.Type === 'A');
    return r === undefined ? undefined : (r.ResourceRecords ?? []).map((x) => x.Value ?? '').sort();
  }

  /** An object's conditions and generation as the apiserver has them now. */
  async objectState(
    kind: LifecycleKind,
    name: string,
  ): Promise<{ generation: number; synced: string | undefined; uid: string }> {
    const o = await this.world.observe();
    const cr = o.crs.find((c) => c.kind === kind && c.name === name);
    return {
      generation: cr?.generation ?? 0,
      synced: cr?.synced === undefined ? undefined : `${cr.synced.status}/${cr.synced.reason}`,
      uid: cr?.uid ?? '',
    };
  }

  /** Whether an A record exists at the host in the current zone. */
  async recordExists(host: Host): Promise<boolean> {
    const o = await this.world.observe();
    const want = normalizeName(this.world.fqdn(host));
    return o.records.some((r) => normalizeName(r.Name ?? '') === want && r.Type === 'A');
  }

  /** Creates an Opaque Secret unless one of that name exists; returns whether it made it. */
  async createSecretIfAbsent(name: string, data: Record<string, string>): Promise<boolean> {
    try {
      await this.world.admin.create(`/api/v1/namespaces/${this.world.ns}/secrets`, {
        metadata: { name },
        type: 'Opaque',
        stringData: data,
      });
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 409) return false;
      throw err;
    }
  }

  /** Creates an EndpointSlice for the Service `web` pointing at an address; returns its resourceVersion. */
  async createEndpointSlice(name: string, address: string): Promise<string> {
    const s = await this.world.admin.create<{ metadata: { resourceVersion?: string } }>(
      `/apis/discovery.k8s.io/v1/namespaces/${this.world.ns}/endpointslices`,
      {
        metadata: { name, labels: { 'kubernetes.io/service-name': 'web' } },
        addressType: 'IPv4',
        ports: [{ name: '', port: 8080, protocol: 'TCP' }],
        endpoints: [{ addresses: [address], conditions: { ready: true } }],
      },
    );
    return s.metadata.resourceVersion ?? '';
  }

  /**
   * Waits (bounded) until the DNSRecord says AWS does not answer: Synced=False AWSUnreachable.
   * Throws a LifecycleViolation naming the invariant, what the object said last and the state.
   */
  async waitForUnreachable(m: LifecycleModel, name: string, step: string): Promise<void> {
    let last: Observed | undefined;
    try {
      await waitFor(
        async () => {
          last = await this.world.observe();
          const cr = last.crs.find((c) => c.kind === 'DNSRecord' && c.name === name);
          return outageProblem(cr) === undefined ? true : undefined;
        },
        {
          timeoutMs: unreachableWithinMs,
          intervalMs: 250,
          description: `DNSRecord ${name} to report Synced=False AWSUnreachable while AWS does not answer`,
        },
      );
    } catch (err) {
      const seen = last?.crs.find((c) => c.kind === 'DNSRecord' && c.name === name);
      const why =
        last === undefined ? (err instanceof Error ? err.message : String(err)) : outageProblem(seen);
      throw this.violation(
        m,
        `invariant broken: ${outageInvariant} (within ${unreachableWithinMs / 1000} s): DNSRecord ${name} says ${why ?? 'so only now'}`,
        last,
        step,
      );
    }
  }

  /**
   * A LifecycleViolation for what a command saw itself: the step, every step so far, the state
   * (`observed`, when the command has it) and the operator's log tail.
   */
  violation(m: LifecycleModel, what: string, observed?: Observed, step?: string): LifecycleViolation {
    return new LifecycleViolation(
      `during step ${m.steps.length + 1}${step !== undefined ? ` "${step}"` : ''}: ${what}\n${this.report(m, observed)}`,
    );
  }

  /** The steps so far, the state and the operator's log tail, for a failure report. */
  private report(m: LifecycleModel, observed: Observed | undefined): string {
    const steps = m.steps.map((s, i) => `${i + 1}. ${s}`).join('\n  ');
    const state = observed !== undefined ? describeState(observed) : ['not observed'];
    return `steps:\n  ${steps}\nstate:\n  ${state.join('\n  ')}\noperator log tail:\n${this.world.operatorTail()}`;
  }

  /** Waits (bounded) until an object switched to ObserveOnly has let go: observed at its generation, no finalizer. */
  async waitForObserveOnly(kind: LifecycleKind, name: string): Promise<void> {
    await waitFor(
      async () => {
        const cr = (await this.world.observe()).crs.find((c) => c.kind === kind && c.name === name);
        return cr !== undefined && cr.observedGeneration === cr.generation && cr.finalizers.length === 0
          ? true
          : undefined;
      },
      { timeoutMs: this.settleMs, intervalMs: 250, description: `${kind} ${name} to let go as ObserveOnly` },
    );
  }

  /**
   * Waits until the world matches the model: returns once nothing is
   * waiting; throws LifecycleViolation at once when a safety invariant
   * breaks, or with everything still waiting when the deadline passes.
   */
  async settle(m: LifecycleModel, step: string): Promise<void> {
    m.steps.push(step);
    const started = Date.now();
    let last: Verdict | undefined;
    let seen: Observed | undefined;
    try {
      await waitFor(
        async () => {
          seen = await this.world.observe();
          // The groups the operator made for this run's Gateways: what they own is the run's.
          for (const c of seen.crs)
            if (c.kind === 'MyIngressGroup' && c.name.startsWith(gatewayGroupName(this.world.ns, '')))
              m.gatewayGroupUids.set(c.uid, c.name);
          const verdict = judge(m, seen, { zoneName: this.world.zoneName, ns: this.world.ns });
          last = verdict;
          if (verdict.broken.length > 0) throw new AbortWait('broken');
          return verdict.waiting.length === 0 ? true : undefined;
        },
        { timeoutMs: this.settleMs, intervalMs: 250, description: `step "${step}" to settle` },
      );
    } catch (err) {
      const v = last;
      const what =
        v === undefined
          ? [err instanceof Error ? err.message : String(err)]
          : v.broken.length > 0
            ? v.broken.map((b) => `invariant broken (safety): ${b}`)
            : v.waiting.map((w) => `invariant broken (not settled after ${this.settleMs / 1000} s): ${w}`);
      throw new LifecycleViolation(
        `after step ${m.steps.length} "${step}":\n  ${what.join('\n  ')}\n${this.report(m, seen)}`,
      );
    }
    this.settleTimes.push(Date.now() - started);
  }
}
