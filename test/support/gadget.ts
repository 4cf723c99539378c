// A test kind, Gadget, whose "cloud" is in-process (optionally persisted to a
// file, so it survives an operator process being killed). Its calls can be
// made to fail or block, which is how the engine's lifecycle is exercised.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type {
  CompanionWrite,
  Created,
  DeltaEntry,
  ExistingObservation,
  ExternalClient,
  Observation,
  ReadyState,
  ReconcileContext,
  Updated,
} from '../../src/runtime/adapter.ts';
import type { ResourceType } from '../../src/apis/meta.ts';
import { secretType } from '../../src/apis/core.ts';
import {
  ownershipFromTags,
  ownershipTagMap,
  type ManagedObject,
  type ManagedSpec,
  type ManagedStatus,
} from '../../src/apis/managed.ts';

export const gadgetType: ResourceType = {
  group: 'test.skylift.dev',
  version: 'v1',
  plural: 'gadgets',
  kind: 'Gadget',
  namespaced: true,
};

export interface GadgetSpec extends ManagedSpec {
  size: number;
}
/** What the gadget adapter reports. */
export interface GadgetStatus extends ManagedStatus {
  id?: string | undefined;
  size?: number | undefined;
}
export type Gadget = ManagedObject<GadgetSpec, GadgetStatus>;

/** The Gadget CRD: spec fields, the shared policy fields, a status subresource. */
export const gadgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.test.skylift.dev' },
  spec: {
    group: 'test.skylift.dev',
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['size'],
                properties: {
                  size: { type: 'integer' },
                  deletionPolicy: { type: 'string', enum: ['Delete', 'Orphan'], default: 'Delete' },
                  managementPolicy: { type: 'string', enum: ['Manage', 'ObserveOnly'], default: 'Manage' },
                  externalName: { type: 'string' },
                },
              },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
};

/** One thing in the fake cloud. */
export interface CloudGadget {
  id: string;
  size: number;
  tags: Record<string, string>;
}

type Op = 'observe' | 'create' | 'update' | 'delete';

/**
 * The fake cloud: a map of gadgets, optionally mirrored to a JSON file that
 * every operation re-reads, so separate processes share it.
 */
export class FakeCloud {
  readonly calls: Record<Op, number> = { observe: 0, create: 0, update: 0, delete: 0 };
  private readonly file: string | undefined;
  private items = new Map<string, CloudGadget>();
  private nextId = 1;
  private readonly failures: { op: Op; error: Error; times: number }[] = [];
  private readonly blocks = new Map<Op, { entered: () => void; release: Promise<void> }>();
  /** Runs right after a create has been stored (crash tests kill the process here). */
  afterCreate: (() => void) | undefined;
  /** Deletes take this many calls to finish (gone: false before). */
  slowDeletes = 0;
  /** A step beside the gadget that observing reports as failing (e.g. a backup), while the gadget is fine. */
  sideFailure: { reason: string; message: string } | undefined;
  /** What observing reports instead of Ready (e.g. something a person must create first). */
  notReady: ReadyState | undefined;
  /**
   * Observing asks for a companion Secret `<object name>-gadget` holding what
   * it saw (id, size): the engine's writes that follow from an observation,
   * as a ManagedDB's connection Secret follows its instance's endpoint.
   */
  companion = false;

  /** With `file`, state lives there; `reuse` keeps what an earlier process left (else it starts empty). */
  constructor(file?: string, opts: { reuse?: boolean } = {}) {
    this.file = file;
    if (file === undefined) return;
    if (opts.reuse === true && existsSync(file)) this.load();
    else this.save();
  }

  all(): CloudGadget[] {
    this.load();
    return [...this.items.values()];
  }

  get(id: string): CloudGadget | undefined {
    this.load();
    return this.items.get(id);
  }

  /** Puts a gadget in directly (someone else's, or one to adopt). */
  put(g: CloudGadget): void {
    this.load();
    this.items.set(g.id, g);
    this.save();
  }

  remove(id: string): void {
    this.load();
    this.items.delete(id);
    this.save();
  }

  /** Makes the next `times` calls of `op` throw `error`. */
  failNext(op: Op, error: Error, times = 1): void {
    this.failures.push({ op, error, times });
  }

  /** Makes the next call of `op` wait until the returned release() is called; `entered` resolves when it is waiting. */
  block(op: Op): { entered: Promise<void>; release: () => void } {
    let release!: () => void;
    let entered!: () => void;
    const enteredP = new Promise<void>((r) => (entered = r));
    const releaseP = new Promise<void>((r) => (release = r));
    this.blocks.set(op, { entered, release: releaseP });
    return { entered: enteredP, release };
  }

  async enter(op: Op): Promise<void> {
    this.calls[op]++;
    const b = this.blocks.get(op);
    if (b !== undefined) {
      this.blocks.delete(op);
      b.entered();
      await b.release;
    }
    const f = this.failures.find((x) => x.op === op && x.times > 0);
    if (f !== undefined) {
      f.times--;
      throw f.error;
    }
    this.load();
  }

  create(size: number, tags: Record<string, string>): CloudGadget {
    const g = { id: `gadget-${this.nextId++}-${Math.random().toString(16).slice(2, 8)}`, size, tags };
    this.items.set(g.id, g);
    this.save();
    return g;
  }

  save(): void {
    if (this.file === undefined) return;
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify({ nextId: this.nextId, items: [...this.items.values()] }));
    renameSync(tmp, this.file);
  }

  private load(): void {
    if (this.file === undefined) return;
    const data = JSON.parse(readFileSync(this.file, 'utf8')) as { nextId: number; items: CloudGadget[] };
    this.nextId = data.nextId;
    this.items = new Map(data.items.map((g) => [g.id, g]));
  }
}

/** The Gadget adapter: finds by recorded id, externalName, or the CR's uid tag. */
export class GadgetAdapter implements ExternalClient<Gadget> {
  readonly cloud: FakeCloud;
  constructor(cloud: FakeCloud) {
    this.cloud = cloud;
  }

  async observe(mr: Gadget, ctx: ReconcileContext): Promise<Observation> {
    await this.cloud.enter('observe');
    const ext = mr.spec.externalName;
    const recorded = mr.status?.id;
    const found =
      ext !== undefined && ext !== ''
        ? this.cloud.get(ext)
        : (this.cloud.all().find((g) => g.tags['skylift.dev/uid'] === ctx.ownership.uid) ??
          (recorded !== undefined ? this.cloud.get(recorded) : undefined));
    if (found === undefined) return { exists: false };
    const ownership = ownershipFromTags(found.tags);
    const delta: DeltaEntry[] = [];
    if (found.size !== mr.spec.size)
      delta.push({ field: 'size', change: `size ${found.size} → ${mr.spec.size}` });
    if (ownership === undefined) delta.push({ field: 'ownership', change: 'ownership tags' });
    return {
      exists: true,
      ownership,
      delta,
      ready: this.cloud.notReady ?? { ready: true, reason: 'Available' },
      status: { id: found.id, size: found.size },
      details: undefined,
      ...(this.cloud.companion ? { writes: { companions: [gadgetCompanion(mr, found)] } } : {}),
      ...(this.cloud.sideFailure !== undefined ? { failure: this.cloud.sideFailure } : {}),
    };
  }

  async create(mr: Gadget, ctx: ReconcileContext): Promise<Created> {
    await this.cloud.enter('create');
    const g = this.cloud.create(mr.spec.size, ownershipTagMap(ctx.ownership));
    this.cloud.afterCreate?.();
    return { status: { id: g.id }, description: `created gadget ${g.id}` };
  }

  async update(mr: Gadget, observed: ExistingObservation, ctx: ReconcileContext): Promise<Updated> {
    await this.cloud.enter('update');
    const g = this.cloud.get(String(observed.status.id));
    if (g === undefined) throw new Error('gadget vanished during update');
    g.size = mr.spec.size;
    g.tags = { ...g.tags, ...ownershipTagMap(ctx.ownership) };
    this.cloud.put(g);
    return { description: `size set to ${mr.spec.size}` };
  }

  async delete(_mr: Gadget, observed: ExistingObservation): Promise<{ gone: boolean }> {
    await this.cloud.enter('delete');
    if (this.cloud.slowDeletes > 0) {
      this.cloud.slowDeletes--;
      return { gone: false };
    }
    this.cloud.remove(String(observed.status.id));
    return { gone: true };
  }
}

/** The name of the companion Secret a Gadget's observation writes (with `FakeCloud.companion`). */
export function gadgetCompanionName(mr: Gadget): string {
  return `${mr.metadata.name}-gadget`;
}

/** The companion Secret holding what observing saw of `g`. Pure. */
function gadgetCompanion(mr: Gadget, g: CloudGadget): CompanionWrite {
  return {
    op: 'apply',
    type: secretType,
    object: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: gadgetCompanionName(mr) },
      type: 'Opaque',
      stringData: { id: g.id, size: String(g.size) },
    },
  };
}
