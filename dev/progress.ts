// What `skylift dev` prints while resources converge: one line per condition
// transition of any Skylift resource it watches, and a summary once the
// sample application is Ready.
import type { Logger } from 'pino';
import { kinds } from '../src/kinds/registry.ts';
import type { Clock } from '../src/runtime/clock.ts';
import { getCondition } from '../src/runtime/conditions.ts';
import type { KubeClient } from '../src/runtime/kube/client.ts';
import { Informer } from '../src/runtime/kube/informer.ts';
import { objectKey, type KubeObject, type ResourceType } from '../src/apis/meta.ts';
import type { Condition, ManagedObject } from '../src/apis/managed.ts';

/** Condition types reported, in the order they are printed. */
const reportedTypes = ['Ready', 'Synced'] as const;

/**
 * The Ready/Synced conditions of `cur` whose status or reason differ from
 * those of `old` (all of them present when `old` is undefined). Message-only
 * changes are not transitions. Pure.
 */
export function conditionTransitions(old: ManagedObject | undefined, cur: ManagedObject): Condition[] {
  const out: Condition[] = [];
  for (const type of reportedTypes) {
    const now = getCondition(cur.status?.conditions, type);
    if (now === undefined) continue;
    const before = getCondition(old?.status?.conditions, type);
    if (before?.status !== now.status || before.reason !== now.reason) out.push(now);
  }
  return out;
}

/** One transition line: local time, kind/name (namespace too when not `defaultNamespace`), condition, reason, message. Pure. */
export function formatTransition(
  at: Date,
  obj: ManagedObject,
  c: Condition,
  defaultNamespace: string,
): string {
  const ns = obj.metadata.namespace;
  const name = ns !== undefined && ns !== defaultNamespace ? `${ns}/${obj.metadata.name}` : obj.metadata.name;
  const time = at.toTimeString().slice(0, 8);
  const what = `${obj.kind ?? '?'}/${name}`;
  const cond = `${c.type}=${c.status}`;
  return `${time}  ${what.padEnd(24)} ${cond.padEnd(12)} ${c.reason.padEnd(20)} ${c.message}`.trimEnd();
}

/** True when the object's Ready condition is True. Pure. */
export function isReady(obj: ManagedObject | undefined): boolean {
  return getCondition(obj?.status?.conditions, 'Ready')?.status === 'True';
}

/** Options for {@link ReadinessReporter}. */
export interface ReadinessReporterOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly types: readonly ResourceType[];
  /** Namespaces to watch; empty: all. */
  readonly namespaces: readonly string[];
  /** Namespace left out of printed names (the samples' namespace). */
  readonly defaultNamespace: string;
  readonly write: (line: string) => void;
}

/**
 * Watches Skylift resources and prints each condition transition as it is
 * observed. {@link whenReady} resolves once a given set of objects is Ready.
 */
export class ReadinessReporter {
  private readonly informers: { readonly kind: string; readonly informer: Informer<ManagedObject> }[] = [];
  private readonly waiters: { keys: readonly string[]; resolve: (objs: ManagedObject[]) => void }[] = [];

  constructor(opts: ReadinessReporterOptions) {
    const namespaces = opts.namespaces.length > 0 ? opts.namespaces : [undefined];
    for (const type of opts.types) {
      for (const namespace of namespaces) {
        const inf = new Informer<ManagedObject>({
          client: opts.client,
          type,
          clock: opts.clock,
          logger: opts.logger,
          namespace,
        });
        inf.on((event, obj, old) => {
          if (event === 'DELETED') return;
          for (const c of conditionTransitions(old, obj))
            opts.write(
              formatTransition(
                new Date(opts.clock.now()),
                { ...obj, kind: type.kind },
                c,
                opts.defaultNamespace,
              ),
            );
          this.check();
        });
        this.informers.push({ kind: type.kind, informer: inf });
      }
    }
  }

  /** Starts watching. */
  start(): void {
    for (const i of this.informers) i.informer.start();
  }

  /** Resolves with the objects (keys `kind/namespace/name`) once every one of them is Ready. */
  whenReady(keys: readonly string[]): Promise<ManagedObject[]> {
    return new Promise((resolve) => {
      this.waiters.push({ keys, resolve });
      this.check();
    });
  }

  /** Stops the watches. Idempotent. */
  async stop(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.informer.stop()));
  }

  private find(key: string): ManagedObject | undefined {
    const slash = key.indexOf('/');
    const kind = key.slice(0, slash);
    const objKey = key.slice(slash + 1);
    for (const i of this.informers) {
      if (i.kind !== kind) continue;
      const obj = i.informer.get(objKey);
      if (obj !== undefined) return obj;
    }
    return undefined;
  }

  private check(): void {
    for (const w of [...this.waiters]) {
      const objs = w.keys.map((k) => this.find(k));
      if (objs.every(isReady)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(objs.filter((o): o is ManagedObject => o !== undefined));
      }
    }
  }
}

/** `Kind/namespace/name` for an object of a type, as {@link ReadinessReporter.whenReady} takes it. Pure. */
export function readinessKey(kind: string, obj: KubeObject): string {
  return `${kind}/${objectKey(obj.metadata)}`;
}

/**
 * The summary printed once the samples are Ready: the load balancer's DNS
 * name, each record's FQDN, each database's endpoint and connection Secret,
 * and a `skylift trace` to try, spelled `command` (e.g. `bin/skylift` in a
 * clone, where no `skylift` is on the PATH). Pure.
 */
export function formatSampleSummary(
  objs: readonly ManagedObject[],
  elapsedMs: number,
  namespace: string,
  command = 'skylift',
): string {
  const ns = namespace === 'default' ? '' : ` -n ${namespace}`;
  const lines = [`All samples Ready after ${(elapsedMs / 1000).toFixed(1)} s:`];
  for (const o of objs) {
    const kind = kinds.find((k) => k.type.kind === o.kind);
    lines.push(...(kind?.summarize(o, namespace) ?? [`  ${o.kind ?? '?'} ${o.metadata.name}`]));
  }
  const first = objs[0];
  if (first !== undefined)
    lines.push(
      `Trace one:  ${command} trace ${(first.kind ?? '').toLowerCase()}/${first.metadata.name}${ns}`,
    );
  return lines.join('\n');
}
