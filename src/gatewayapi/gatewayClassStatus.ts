// What Skylift writes on a GatewayClass of its own: the Accepted condition and the supported
// features. Pure: the controller (gatewayClassController.ts) decides when to write it.
import {
  skyliftGatewayControllerName,
  type GatewayClass,
  type SupportedFeature,
} from '../apis/gatewayApi.ts';
import type { Condition } from '../apis/managed.ts';
import { deepEqual } from '../runtime/mergePatch.ts';
import { supportedFeaturesStatus } from './features.ts';

/** GatewayClass condition types and reasons Skylift sets (the Gateway API's names). */
export const GatewayClassCondition = {
  Accepted: 'Accepted',
} as const;

/** Reasons of the Accepted condition, as the Gateway API names them. */
export const GatewayClassReason = {
  /** The class is Skylift's and it can serve it. */
  Accepted: 'Accepted',
  /** `spec.parametersRef` is set: Skylift takes no parameters (yet). */
  InvalidParameters: 'InvalidParameters',
} as const;

/** The part of a GatewayClass's status Skylift owns (applied with field manager `skylift`). */
export interface GatewayClassStatusApply {
  readonly conditions: readonly Condition[];
  readonly supportedFeatures: readonly SupportedFeature[];
}

/** True when the class names Skylift's controller. Pure. */
export function isSkyliftClass(gc: GatewayClass): boolean {
  return gc.spec.controllerName === skyliftGatewayControllerName;
}

/**
 * The status Skylift wants on `gc`, a class of its own: `Accepted` at the class's generation —
 * `True`/`Accepted` unless `spec.parametersRef` is set (`False`/`InvalidParameters`, saying so) —
 * and `supportedFeatures` from `features`. The condition's lastTransitionTime is the current
 * one while its status stays, else `now` (seconds, as metav1.Time). Pure.
 */
export function desiredGatewayClassStatus(
  gc: GatewayClass,
  now: Date,
  features?: readonly string[],
): GatewayClassStatusApply {
  const ref = gc.spec.parametersRef;
  const verdict =
    ref === undefined
      ? {
          status: 'True' as const,
          reason: GatewayClassReason.Accepted,
          message: `Accepted by Skylift (${skyliftGatewayControllerName})`,
        }
      : {
          status: 'False' as const,
          reason: GatewayClassReason.InvalidParameters,
          message: `Skylift takes no parameters: spec.parametersRef (${ref.group === '' ? 'core' : ref.group}/${ref.kind} ${ref.namespace !== undefined ? `${ref.namespace}/` : ''}${ref.name}) must be unset`,
        };
  const previous = gc.status?.conditions?.find((c) => c.type === GatewayClassCondition.Accepted);
  const accepted: Condition = {
    type: GatewayClassCondition.Accepted,
    ...verdict,
    lastTransitionTime:
      previous !== undefined && previous.status === verdict.status
        ? previous.lastTransitionTime
        : now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...(gc.metadata.generation !== undefined ? { observedGeneration: gc.metadata.generation } : {}),
  };
  return { conditions: [accepted], supportedFeatures: supportedFeaturesStatus(features) };
}

/**
 * True when `gc`'s status already says what `want` says: each wanted condition present with the
 * same status, reason, message and observedGeneration (its lastTransitionTime aside), and the
 * supported features equal, in order. Another writer's conditions are not compared. Pure.
 */
export function gatewayClassStatusHolds(gc: GatewayClass, want: GatewayClassStatusApply): boolean {
  const have = gc.status?.conditions ?? [];
  for (const w of want.conditions) {
    const h = have.find((c) => c.type === w.type);
    if (
      h === undefined ||
      h.status !== w.status ||
      h.reason !== w.reason ||
      h.message !== w.message ||
      h.observedGeneration !== w.observedGeneration
    )
      return false;
  }
  return deepEqual(gc.status?.supportedFeatures ?? [], want.supportedFeatures);
}
