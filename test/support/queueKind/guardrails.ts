// Queue's part of a TeamPolicy: the longest visibility timeout a namespace's queues may have.
// Mirrors src/kinds/<kind>/guardrails.ts: the section's schema (rendered into the TeamPolicy CRD
// of a registry with this kind), the check the tenancy connector runs before any AWS change, and
// the same rule at admission (the chart's ValidatingAdmissionPolicy), in the same words.
import { int, obj } from '../../../src/apis/schema.ts';
import type { GuardrailSection, TeamPolicy } from '../../../src/apis/teampolicy.ts';
import { celSection, celString, forbidsMessage, type KindAdmission } from '../../../src/tenancy/admission.ts';
import { forbidden } from '../../../src/tenancy/connector.ts';
import { defaultVisibilityTimeoutSeconds, type QueueSpec } from './api.ts';

/** spec.guardrails.queues. */
export interface QueueGuardrails {
  maxVisibilityTimeoutSeconds?: number;
}

/** spec.guardrails.queues of a TeamPolicy: its key and schema (in the TeamPolicy CRD of a registry with Queue). */
export const queueGuardrailSection: GuardrailSection = {
  key: 'queues',
  schema: obj('What Queues in the selected namespaces may use.', {
    maxVisibilityTimeoutSeconds: int(
      'The longest visibility timeout a queue may have (spec.visibilityTimeoutSeconds), in seconds. Absent: no limit.',
      { minimum: 0, maximum: 43_200 },
    ),
  }),
};

/** The policy's queues section, or undefined. Pure. */
export function queueGuardrailsOf(policy: TeamPolicy): QueueGuardrails | undefined {
  return policy.spec.guardrails?.[queueGuardrailSection.key] as QueueGuardrails | undefined;
}

const fix =
  'lower spec.visibilityTimeoutSeconds, or ask the platform team to raise spec.guardrails.queues.maxVisibilityTimeoutSeconds';

/**
 * Checks a queue's spec against the policy's queue guardrails. Throws ForbiddenError naming the
 * policy, the field and the limit (what {@link queueAdmission} says at admission). Pure.
 */
export function checkQueue(policy: TeamPolicy, spec: QueueSpec): void {
  const max = queueGuardrailsOf(policy)?.maxVisibilityTimeoutSeconds;
  const want = spec.visibilityTimeoutSeconds ?? defaultVisibilityTimeoutSeconds;
  if (max !== undefined && want > max) {
    throw forbidden(
      policy,
      'spec.visibilityTimeoutSeconds',
      `${want} seconds is above the longest visibility timeout this namespace may use (${max} seconds)`,
      fix,
    );
  }
}

/** CEL: the policy's queues section, as an optional. */
const Q = celSection(queueGuardrailSection.key);

/** The queue guardrails at admission: the object alone decides them. As {@link checkQueue}. */
export const queueAdmission: KindAdmission = {
  variables: [
    {
      name: 'visibility',
      expression: `object.spec.?visibilityTimeoutSeconds.orValue(${defaultVisibilityTimeoutSeconds})`,
    },
    // -1: the policy sets no limit.
    { name: 'maxVisibility', expression: `${Q}.?maxVisibilityTimeoutSeconds.orValue(-1)` },
  ],
  validations: [
    {
      expression: 'variables.maxVisibility < 0 || variables.visibility <= variables.maxVisibility',
      messageExpression: forbidsMessage(
        'spec.visibilityTimeoutSeconds',
        "string(variables.visibility) + ' seconds is above the longest visibility timeout this namespace may use (' + string(variables.maxVisibility) + ' seconds)'",
        celString(`; ${fix}`),
      ),
      message:
        'a TeamPolicy forbids spec.visibilityTimeoutSeconds: it is above the longest visibility timeout this namespace may use',
    },
  ],
};
