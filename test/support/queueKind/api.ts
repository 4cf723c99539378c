// The Queue test kind's API: an SQS queue, in its own API group so it is
// plainly not a product kind. Mirrors src/kinds/<kind>/api.ts.
import {
  managedSpecProperties,
  managedSpecRules,
  managedStatusProperties,
} from '../../../src/apis/common.ts';
import { managedCrd, type CrdManifest } from '../../../src/apis/crd.ts';
import type { ManagedObject, ManagedSpec, ManagedStatus } from '../../../src/apis/managed.ts';
import type { ResourceType } from '../../../src/apis/meta.ts';
import { int, obj, str, stringMap, type Schema } from '../../../src/apis/schema.ts';
import { managedFieldContract, type FieldContract } from '../../../src/apis/fieldContract.ts';

export const queueType: ResourceType = {
  group: 'test.skylift.dev',
  version: 'v1alpha1',
  plural: 'queues',
  kind: 'Queue',
  namespaced: true,
};

/** SQS's own default, and the spec's. */
export const defaultVisibilityTimeoutSeconds = 30;

export interface QueueSpec extends ManagedSpec {
  /** Seconds a received message stays hidden from other consumers (0..43200). */
  visibilityTimeoutSeconds?: number;
  /** Extra tags on the queue (skylift.dev/* keys are reserved). */
  tags?: Record<string, string>;
}

/** What the queue adapter reports (the status schema lists the same fields). */
export interface QueueStatus extends ManagedStatus {
  url?: string | undefined;
  arn?: string | undefined;
}

export type Queue = ManagedObject<QueueSpec, QueueStatus>;

const spec: Schema = obj(
  'The desired SQS queue.',
  {
    visibilityTimeoutSeconds: int('Seconds a received message stays invisible to other consumers.', {
      minimum: 0,
      maximum: 43_200,
      default: defaultVisibilityTimeoutSeconds,
    }),
    tags: stringMap('Extra tags on the queue (skylift.dev/* keys are reserved).', {
      'x-kubernetes-validations': [
        {
          rule: "self.all(k, !k.startsWith('skylift.dev/'))",
          message: 'tag keys starting with skylift.dev/ are reserved',
        },
      ],
    }),
    ...managedSpecProperties,
  },
  { 'x-kubernetes-validations': [...managedSpecRules] },
);

const status: Schema = obj('What Skylift observed in SQS.', {
  url: str('Queue URL.'),
  arn: str('Queue ARN.'),
  ...managedStatusProperties,
});

/** The Queue CRD, in the kind's own group (test.skylift.dev). Pure. */
export function queueCrd(): CrdManifest {
  return managedCrd({
    type: queueType,
    shortName: 'tq',
    description: 'An SQS queue managed by Skylift (a test kind).',
    columns: [
      { name: 'Visibility', type: 'integer', jsonPath: '.spec.visibilityTimeoutSeconds' },
      { name: 'URL', type: 'string', jsonPath: '.status.url' },
    ],
    spec,
    status,
  });
}

/** What becomes of each Queue spec field after create (src/apis/fieldContract.ts). */
export const queueFieldContract: FieldContract = {
  visibilityTimeoutSeconds: { applied: 'SetQueueAttributes VisibilityTimeout' },
  tags: { applied: 'TagQueue and UntagQueue (only tag keys Skylift applied are removed)' },
  ...managedFieldContract,
};
