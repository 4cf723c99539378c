// Queue's AWS side: one SQS queue with a deterministic name, tagged with the
// CR's ownership. Mirrors src/kinds/<kind>/adapter.ts, with the same idioms
// (awsCall, lookup, createOrFind, tag maps, hasErrorCode).
import { createHash } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueueTagsCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
  UntagQueueCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { ownershipFromTags, ownershipTagMap, type OwnershipTags } from '../../../src/apis/managed.ts';
import { awsCall, createOrFind, lookup, type ErrorTable } from '../../../src/providers/aws/calls.ts';
import { hasErrorCode } from '../../../src/providers/aws/errors.ts';
import { hasUserTagChanges, ownedTagList, tagMap, userTagChanges } from '../../../src/providers/aws/tags.ts';
import {
  describeDelta,
  hasDelta,
  type Created,
  type Delta,
  type DeltaEntry,
  type ExistingObservation,
  type ExternalClient,
  type Observation,
  type ReconcileContext,
  type Updated,
} from '../../../src/runtime/adapter.ts';
import { Reason } from '../../../src/runtime/conditions.ts';
import { defaultVisibilityTimeoutSeconds, type Queue, type QueueSpec } from './api.ts';

/** What can differ between an SQS queue and its Queue. */
export type QueueField = 'visibilityTimeout' | 'tags' | 'ownership';

/** What observe saw, handed to update and delete. */
export interface QueueDetails {
  readonly name: string;
  readonly url: string;
  readonly arn: string | undefined;
  readonly visibilityTimeoutSeconds: number | undefined;
  readonly tags: Readonly<Record<string, string>>;
}

type QueueObservation = ExistingObservation<QueueDetails, QueueField>;

/** SQS codes no retry fixes (the rest: the generic tables). */
export const sqsErrorTable: ErrorTable = {
  terminal: ['InvalidAttributeName', 'InvalidAttributeValue', 'InvalidParameterValue'],
};

/**
 * SQS's "no such queue". The SDK names the error QueueDoesNotExist, but the
 * code awsErrorCode reads first (the query-protocol `Code`, which moto and
 * SQS both send) is AWS.SimpleQueueService.NonExistentQueue: accept both.
 */
export function isQueueAbsent(err: unknown): boolean {
  return hasErrorCode(err, 'AWS.SimpleQueueService.NonExistentQueue', 'QueueDoesNotExist');
}

/** SQS's "the name is taken with other attributes" (SDK name QueueNameExists, code QueueAlreadyExists). */
function isQueueNameTaken(err: unknown): boolean {
  return hasErrorCode(err, 'QueueAlreadyExists', 'QueueNameExists');
}

/**
 * The queue name of a Queue: readable namespace and name, then a hash of the
 * uid so a re-created CR never meets its predecessor's queue. At most 80
 * characters of [A-Za-z0-9_-], as SQS requires. Pure.
 */
export function queueName(namespace: string, name: string, uid: string): string {
  const prefix = 'sky-';
  const hash = createHash('sha256').update(uid).digest('hex').slice(0, 10);
  const room = 80 - prefix.length - 1 - hash.length;
  const readable = `${namespace}_${name}`.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, room);
  return `${prefix}${readable}-${hash}`;
}

/** The queue a Queue stands for: `spec.externalName` when adopting, else its deterministic name. Pure. */
export function queueIdentity(mr: Queue): string {
  const ext = mr.spec.externalName;
  return ext !== undefined && ext !== ''
    ? ext
    : queueName(mr.metadata.namespace ?? '', mr.metadata.name, mr.metadata.uid ?? '');
}

function wantedVisibility(spec: QueueSpec): number {
  return spec.visibilityTimeoutSeconds ?? defaultVisibilityTimeoutSeconds;
}

/** What differs between the queue and the spec (and ownership tags to add on adoption). Pure. */
export function queueDelta(spec: QueueSpec, seen: QueueDetails, ours: OwnershipTags): Delta<QueueField> {
  const delta: DeltaEntry<QueueField>[] = [];
  const want = wantedVisibility(spec);
  if (seen.visibilityTimeoutSeconds !== want) {
    delta.push({
      field: 'visibilityTimeout',
      change: `visibilityTimeoutSeconds ${String(seen.visibilityTimeoutSeconds ?? '?')} → ${want}`,
    });
  }
  const tags = userTagChanges(spec.tags, seen.tags);
  if (hasUserTagChanges(tags)) {
    const keys = [...tags.remove, ...Object.keys(tags.add).filter((k) => k in (spec.tags ?? {}))];
    delta.push({ field: 'tags', change: `tags ${keys.sort().join(', ')}` });
  }
  if (ownershipFromTags(seen.tags)?.uid !== ours.uid)
    delta.push({ field: 'ownership', change: 'ownership tags' });
  return delta;
}

/**
 * The Queue adapter. Tags follow the spec: those Skylift applied and the
 * spec dropped are removed; tags someone else put on the queue stay
 * (providers/aws/tags.ts records which keys are the user's).
 */
export class QueueAdapter implements ExternalClient<Queue, QueueDetails, QueueField> {
  private readonly sqs: SQSClient;

  constructor(sqs: SQSClient) {
    this.sqs = sqs;
  }

  async observe(mr: Queue, ctx: ReconcileContext): Promise<Observation<QueueDetails, QueueField>> {
    const name = queueIdentity(mr);
    const url = await this.urlOf(name);
    if (url === undefined) return { exists: false };
    const attributes = await lookup(`read queue ${name}`, sqsErrorTable, isQueueAbsent, () =>
      this.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn', 'VisibilityTimeout'] }),
      ),
    );
    const tags = await this.tagsOf(name, url);
    // Deleted between the calls: as absent as if GetQueueUrl had said so.
    if (attributes === undefined || tags === undefined) return { exists: false };
    const visibility = attributes.Attributes?.VisibilityTimeout;
    const details: QueueDetails = {
      name,
      url,
      arn: attributes.Attributes?.QueueArn,
      visibilityTimeoutSeconds: visibility !== undefined ? Number(visibility) : undefined,
      tags,
    };
    const managed = mr.metadata.deletionTimestamp === undefined && mr.spec.managementPolicy !== 'ObserveOnly';
    return {
      exists: true,
      ownership: ownershipFromTags(tags),
      delta: managed ? queueDelta(mr.spec, details, ctx.ownership) : [],
      // A queue is usable the moment it exists.
      ready: { ready: true, reason: Reason.Available },
      status: { url, ...(details.arn !== undefined ? { arn: details.arn } : {}) },
      details,
    };
  }

  async create(mr: Queue, ctx: ReconcileContext): Promise<Created> {
    const name = queueIdentity(mr);
    // CreateQueue answers an identical repeat with the existing queue's URL; a
    // queue under this name with other attributes (changed since a lost
    // answer) is ours only if it carries our uid.
    const url = await createOrFind({
      what: `create queue ${name}`,
      table: sqsErrorTable,
      isDuplicate: isQueueNameTaken,
      ownership: ctx.ownership,
      create: async () => {
        const out = await this.sqs.send(
          new CreateQueueCommand({
            QueueName: name,
            Attributes: { VisibilityTimeout: String(wantedVisibility(mr.spec)) },
            tags: tagMap(ownedTagList(mr.spec.tags, ctx.ownership)),
          }),
        );
        if (out.QueueUrl === undefined) throw new Error(`create queue ${name}: SQS returned no queue URL`);
        return out.QueueUrl;
      },
      find: async () => {
        const existing = await this.urlOf(name);
        if (existing === undefined) return undefined;
        const tags = await this.tagsOf(name, existing);
        return tags !== undefined ? { value: existing, tags } : undefined;
      },
    });
    return { status: { url }, description: `created queue ${name}` };
  }

  async update(mr: Queue, observed: QueueObservation, ctx: ReconcileContext): Promise<Updated> {
    const { name, url, tags } = observed.details;
    const done: DeltaEntry<QueueField>[] = [];
    if (hasDelta(observed.delta, 'visibilityTimeout')) {
      await awsCall(`set attributes of queue ${name}`, sqsErrorTable, () =>
        this.sqs.send(
          new SetQueueAttributesCommand({
            QueueUrl: url,
            Attributes: { VisibilityTimeout: String(wantedVisibility(mr.spec)) },
          }),
        ),
      );
      done.push(...observed.delta.filter((d) => d.field === 'visibilityTimeout'));
    }
    const changes = hasDelta(observed.delta, 'tags') ? userTagChanges(mr.spec.tags, tags) : undefined;
    const untag = async (keys: string[]): Promise<void> => {
      if (keys.length === 0) return;
      await awsCall(`untag queue ${name}`, sqsErrorTable, () =>
        this.sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: keys })),
      );
    };
    await untag(changes?.remove ?? []);
    const toTag = {
      ...(changes?.add ?? {}),
      ...(hasDelta(observed.delta, 'ownership') ? ownershipTagMap(ctx.ownership) : {}),
    };
    if (Object.keys(toTag).length > 0) {
      await awsCall(`tag queue ${name}`, sqsErrorTable, () =>
        this.sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: toTag })),
      );
    }
    await untag(changes?.removeAfter ?? []);
    done.push(...observed.delta.filter((d) => d.field === 'tags' || d.field === 'ownership'));
    const description = describeDelta(done);
    return description !== undefined ? { description } : {};
  }

  async delete(_mr: Queue, observed: QueueObservation): Promise<{ gone: boolean }> {
    const { name, url } = observed.details;
    await lookup(`delete queue ${name}`, sqsErrorTable, isQueueAbsent, () =>
      this.sqs.send(new DeleteQueueCommand({ QueueUrl: url })),
    );
    // SQS may go on answering GetQueueUrl for a while (up to 60 s in AWS): gone once it stops.
    return { gone: (await this.urlOf(name)) === undefined };
  }

  /** The queue's URL; undefined when there is no queue by that name. */
  private async urlOf(name: string): Promise<string | undefined> {
    const out = await lookup(`find queue ${name}`, sqsErrorTable, isQueueAbsent, () =>
      this.sqs.send(new GetQueueUrlCommand({ QueueName: name })),
    );
    return out?.QueueUrl;
  }

  /** The queue's tags; undefined when the queue is gone. */
  private async tagsOf(name: string, url: string): Promise<Record<string, string> | undefined> {
    const out = await lookup(`list tags of queue ${name}`, sqsErrorTable, isQueueAbsent, () =>
      this.sqs.send(new ListQueueTagsCommand({ QueueUrl: url })),
    );
    return out === undefined ? undefined : { ...(out.Tags ?? {}) };
  }
}
