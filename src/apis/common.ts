import type { PrinterColumn } from './crd.ts';
import { arr, createOnly, int, obj, str, type CelRule, type Schema } from './schema.ts';

/** The spec fields every kind shares (the managed-resource contract). */
export const managedSpecProperties: Record<string, Schema> = {
  deletionPolicy: str(
    'What happens to the AWS resource when this object is deleted: Delete removes it (and its children); Orphan leaves it in AWS.',
    { enum: ['Delete', 'Orphan'], default: 'Delete' },
  ),
  managementPolicy: str(
    'Manage lets Skylift create, update and delete the AWS resource; ObserveOnly only reports on it and never writes to AWS.',
    { enum: ['Manage', 'ObserveOnly'], default: 'Manage' },
  ),
  externalName: str(
    'Identifier of an existing AWS resource to adopt instead of creating one. Skylift refuses (Synced=False, reason Conflict) if the resource is owned by another object.',
    { minLength: 1, maxLength: 2048 },
  ),
};

/** The spec-level rules every kind shares. */
export const managedSpecRules: CelRule[] = [
  createOnly(
    'externalName',
    'to manage another AWS resource, delete this object (with deletionPolicy: Orphan to keep the current one) and create a new one',
  ),
];

const condition = obj(
  'A condition of this object (metav1.Condition).',
  {
    type: str('Condition type: Ready (the AWS resource is usable) or Synced (the last reconcile succeeded).'),
    status: str('True, False or Unknown.', { enum: ['True', 'False', 'Unknown'] }),
    reason: str('A CamelCase reason for the condition, e.g. Available, Creating, Terminal, Conflict.'),
    message: str('A human-readable explanation.'),
    lastTransitionTime: str('When the status last changed.', { format: 'date-time' }),
    observedGeneration: int('The metadata.generation the condition was computed from.', { format: 'int64' }),
  },
  { required: ['type', 'status', 'lastTransitionTime'] },
);

/** The status fields every kind shares. */
export const managedStatusProperties: Record<string, Schema> = {
  conditions: arr('Ready and Synced conditions.', condition, {
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  }),
  observedGeneration: int('The metadata.generation Skylift last reconciled.', { format: 'int64' }),
  location: obj(
    'Where the AWS resource lives, recorded when Skylift created or found it. If the namespace’s TeamPolicy later names another account or region, Skylift refuses to act on this object (Synced=False, reason Forbidden) rather than create a second resource there.',
    {
      account: str('The 12-digit AWS account.'),
      region: str('The AWS region.'),
    },
  ),
};

/** Printer columns every kind ends with. */
export const readySyncedAgeColumns: PrinterColumn[] = [
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Synced', type: 'string', jsonPath: '.status.conditions[?(@.type=="Synced")].status' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];
