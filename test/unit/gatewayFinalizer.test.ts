// The Gateway finalizer's pure parts: which step a Gateway is at, and that only Skylift's own
// finalizer is ever added or removed.
import { describe, expect, it } from 'vitest';
import {
  gatewayCleanupStep,
  gatewayFinalizer,
  hasGatewayFinalizer,
  withGatewayFinalizer,
  type GatewayCleanupStep,
} from '../../src/kinds/myingress/gateway/finalizer.ts';

describe('gatewayCleanupStep', () => {
  it.each<{
    reason: string;
    served: boolean;
    finalizer: boolean;
    leftovers: boolean;
    want: GatewayCleanupStep;
  }>([
    {
      reason: 'a new Gateway gets the finalizer before anything is made for it',
      served: true,
      finalizer: false,
      leftovers: false,
      want: 'addFinalizer',
    },
    {
      reason: 'a served Gateway that lost the finalizer (removed by hand) gets it back, its group kept',
      served: true,
      finalizer: false,
      leftovers: true,
      want: 'addFinalizer',
    },
    {
      reason: 'a served Gateway with the finalizer is served',
      served: true,
      finalizer: true,
      leftovers: true,
      want: 'serve',
    },
    {
      reason: 'a deleted Gateway whose group or records remain waits for them',
      served: false,
      finalizer: true,
      leftovers: true,
      want: 'cleanUp',
    },
    {
      reason: 'a deleted Gateway with nothing left loses the finalizer',
      served: false,
      finalizer: true,
      leftovers: false,
      want: 'removeFinalizer',
    },
    {
      reason: 'leftovers of a Gateway without the finalizer (made before it existed) are still cleaned up',
      served: false,
      finalizer: false,
      leftovers: true,
      want: 'cleanUp',
    },
    {
      reason: 'another class’s Gateway, never Skylift’s: nothing',
      served: false,
      finalizer: false,
      leftovers: false,
      want: 'nothing',
    },
  ])('$reason', ({ served, finalizer, leftovers, want }) => {
    expect(gatewayCleanupStep({ served, finalizer, leftovers })).toBe(want);
  });
});

describe('withGatewayFinalizer', () => {
  it.each<{ reason: string; have: string[] | undefined; present: boolean; want: string[] }>([
    { reason: 'added to none', have: undefined, present: true, want: [gatewayFinalizer] },
    {
      reason: 'added after others, theirs kept in order',
      have: ['example.com/a', 'example.com/b'],
      present: true,
      want: ['example.com/a', 'example.com/b', gatewayFinalizer],
    },
    {
      reason: 'added once when already there',
      have: [gatewayFinalizer, 'example.com/a'],
      present: true,
      want: ['example.com/a', gatewayFinalizer],
    },
    {
      reason: 'removed, others kept',
      have: ['example.com/a', gatewayFinalizer, 'example.com/b'],
      present: false,
      want: ['example.com/a', 'example.com/b'],
    },
    {
      reason: 'the kinds’ finalizer is not the Gateway’s: kept',
      have: ['aws.skylift.dev/cleanup', gatewayFinalizer],
      present: false,
      want: ['aws.skylift.dev/cleanup'],
    },
    { reason: 'removing from none', have: undefined, present: false, want: [] },
  ])('$reason', ({ have, present, want }) => {
    const next = withGatewayFinalizer(have, present);
    expect(next).toEqual(want);
    expect(hasGatewayFinalizer(next)).toBe(present);
  });
});
