// Hosted zones that go away: the zone directory forgetting a zone, and how a DNSRecord's reconcile
// classifies NoSuchHostedZone (issue 14 item 5). The SDK client is mocked; no time passes.
import {
  GetHostedZoneCommand,
  ListHostedZonesByNameCommand,
  Route53Client,
  type HostedZone as SdkHostedZone,
} from '@aws-sdk/client-route-53';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { goneWithItsZone, zoneGoneError, DNSReason } from '../../src/kinds/dnsrecord/adapter.ts';
import type { DNSRecord } from '../../src/kinds/dnsrecord/api.ts';
import { AwsRetryableError, AwsTerminalError } from '../../src/providers/aws/errors.ts';
import { isNoSuchHostedZone } from '../../src/providers/route53/errors.ts';
import { missingZoneIdError, ZoneDirectory } from '../../src/kinds/dnsrecord/zones.ts';
import {
  AmbiguousZoneNameError,
  HostedZoneDirectory,
  NoSuchZoneError,
  ZoneNameNotFoundError,
} from '../../src/providers/route53/zones.ts';
import { RetryableError, TerminalError, wrap } from '../../src/runtime/errors.ts';
import { FakeClock } from '../support/fakeClock.ts';

const r53 = mockClient(Route53Client);

function noSuchZone(id: string): Error {
  return Object.assign(new Error(`No hosted zone found with ID: ${id}`), {
    name: 'NoSuchHostedZone',
    $metadata: { httpStatusCode: 404 },
  });
}

function sdkZone(id: string, name = 'example.com.'): SdkHostedZone {
  return { Id: `/hostedzone/${id}`, Name: name, CallerReference: id, Config: { PrivateZone: false } };
}

function directory(): ZoneDirectory {
  return new ZoneDirectory(new Route53Client({ region: 'us-east-1' }), new FakeClock());
}

beforeEach(() => {
  r53.reset();
});

describe('ZoneDirectory.forget', () => {
  it('makes the next lookup by name ask Route 53 again and find the zone created under it', async () => {
    r53
      .on(ListHostedZonesByNameCommand)
      .resolvesOnce({ HostedZones: [sdkZone('ZOLD')] })
      .resolves({ HostedZones: [sdkZone('ZNEW')] });
    const zones = directory();
    await expect(zones.resolve({ zoneName: 'example.com' })).resolves.toMatchObject({ id: 'ZOLD' });
    await expect(zones.resolve({ zoneName: 'example.com' })).resolves.toMatchObject({ id: 'ZOLD' });
    expect(r53.commandCalls(ListHostedZonesByNameCommand)).toHaveLength(1);

    zones.forget('/hostedzone/ZOLD');
    await expect(zones.resolve({ zoneName: 'example.com.' })).resolves.toMatchObject({ id: 'ZNEW' });
    expect(r53.commandCalls(ListHostedZonesByNameCommand)).toHaveLength(2);
  });

  it('keeps a name that already resolves to another zone (a late report about the old one)', async () => {
    r53
      .on(ListHostedZonesByNameCommand)
      .resolvesOnce({ HostedZones: [sdkZone('ZOLD')] })
      .resolves({ HostedZones: [sdkZone('ZNEW')] });
    const zones = directory();
    await zones.resolve({ zoneName: 'example.com' });
    zones.forget('ZOLD');
    await expect(zones.resolve({ zoneName: 'example.com' })).resolves.toMatchObject({ id: 'ZNEW' });
    zones.forget('ZOLD');
    await expect(zones.resolve({ zoneName: 'example.com' })).resolves.toMatchObject({ id: 'ZNEW' });
    expect(r53.commandCalls(ListHostedZonesByNameCommand)).toHaveLength(2);
  });

  it('drops a zone looked up by ID; a zoneId that no longer exists is Terminal naming spec.zoneId', async () => {
    r53
      .on(GetHostedZoneCommand)
      .resolvesOnce({ HostedZone: sdkZone('ZGONE'), DelegationSet: { NameServers: [] } })
      .rejects(noSuchZone('ZGONE'));
    const zones = directory();
    await expect(zones.resolve({ zoneId: 'ZGONE' })).resolves.toMatchObject({ name: 'example.com.' });
    await zones.resolve({ zoneId: 'ZGONE' });
    expect(r53.commandCalls(GetHostedZoneCommand)).toHaveLength(1);

    zones.forget('ZGONE');
    const err: unknown = await zones.resolve({ zoneId: 'ZGONE' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TerminalError);
    expect((err as Error).message).toContain('hosted zone ZGONE (spec.zoneId) does not exist');
    expect(isNoSuchHostedZone(err)).toBe(true);
    expect(r53.commandCalls(GetHostedZoneCommand)).toHaveLength(2);
  });
});

describe('isNoSuchHostedZone', () => {
  it.each([
    { reason: 'the SDK error', err: noSuchZone('Z1'), want: true },
    {
      reason: 'a typed error keeping the code',
      err: new AwsTerminalError('list records of zone Z1: …', 'NoSuchHostedZone'),
      want: true,
    },
    {
      reason: 'the engine’s wrap of a typed error',
      err: wrap('observe', new AwsRetryableError('AWSError', 'x', undefined, { cause: noSuchZone('Z1') })),
      want: true,
    },
    { reason: 'another Route 53 error', err: new AwsTerminalError('bad', 'InvalidChangeBatch'), want: false },
    {
      reason: 'HostedZoneNotFound (a different, transient code)',
      err: Object.assign(new Error('x'), { name: 'HostedZoneNotFound' }),
      want: false,
    },
    { reason: 'a plain error', err: new Error('No hosted zone found'), want: false },
    { reason: 'not an error', err: 'NoSuchHostedZone', want: false },
  ])('$reason → $want', ({ err, want }) => {
    expect(isNoSuchHostedZone(err)).toBe(want);
  });
});

describe('zoneGoneError', () => {
  const zone = { id: 'ZOLD', name: 'example.com.', private: false };

  it('by zoneName: retryable (the engine backs off), never Terminal, so the name is looked up again soon', () => {
    const err = zoneGoneError({ zoneName: 'example.com' }, zone, noSuchZone('ZOLD'));
    expect(err).toBeInstanceOf(RetryableError);
    expect(err).not.toBeInstanceOf(TerminalError);
    expect((err as RetryableError).reason).toBe(DNSReason.ZoneGone);
    expect(err.message).toContain('ZOLD');
    expect(err.message).toContain('spec.zoneName example.com.');
  });

  it('by zoneId: Terminal, naming spec.zoneId and what to do', () => {
    const err = zoneGoneError({ zoneId: 'ZOLD' }, zone, noSuchZone('ZOLD'));
    expect(err).toBeInstanceOf(TerminalError);
    expect(err.message).toBe(missingZoneIdError('ZOLD').message);
    expect(err.message).toContain('hosted zone ZOLD (spec.zoneId) does not exist');
    expect(err.message).toContain('delete this DNSRecord and create it again');
  });
});

describe('goneWithItsZone', () => {
  function record(spec: { zoneId?: string; zoneName?: string }, deleting: boolean): DNSRecord {
    return {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'DNSRecord',
      metadata: {
        name: 'www',
        namespace: 'ns',
        ...(deleting ? { deletionTimestamp: '2026-11-22T00:00:00Z' } : {}),
      },
      spec: { ...spec, name: 'www', type: 'A', records: ['192.0.2.1'] },
    };
  }

  it.each([
    {
      reason: 'deleting, by zoneId, zone gone',
      spec: { zoneId: 'Z1' },
      deleting: true,
      gone: true,
      want: true,
    },
    { reason: 'not deleting', spec: { zoneId: 'Z1' }, deleting: false, gone: true, want: false },
    {
      reason: 'by zoneName (a recreated zone may hold it)',
      spec: { zoneName: 'example.com' },
      deleting: true,
      gone: true,
      want: false,
    },
    { reason: 'another error', spec: { zoneId: 'Z1' }, deleting: true, gone: false, want: false },
  ])('$reason → $want', ({ spec, deleting, gone, want }) => {
    const err = gone ? missingZoneIdError('Z1', noSuchZone('Z1')) : new TerminalError('other');
    expect(goneWithItsZone(record(spec, deleting), err)).toBe(want);
  });
});

describe('HostedZoneDirectory: what Route 53 answered, as typed errors carrying the data', () => {
  function hosted(): HostedZoneDirectory {
    return new HostedZoneDirectory(new Route53Client({ region: 'us-east-1' }), new FakeClock());
  }

  it('a zone ID Route 53 does not know: NoSuchZoneError with the bare ID, code and cause kept', async () => {
    const answer = noSuchZone('ZGONE');
    r53.on(GetHostedZoneCommand).rejects(answer);
    const err: unknown = await hosted()
      .byId('/hostedzone/ZGONE')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoSuchZoneError);
    expect(err).toBeInstanceOf(AwsTerminalError);
    expect((err as NoSuchZoneError).zoneId).toBe('ZGONE');
    expect((err as NoSuchZoneError).code).toBe('NoSuchHostedZone');
    expect((err as Error).cause).toBe(answer);
    expect((err as Error).message).not.toMatch(/spec\./);
  });

  it('a name no zone has: ZoneNameNotFoundError with the normalised name', async () => {
    r53.on(ListHostedZonesByNameCommand).resolves({ HostedZones: [sdkZone('ZOTHER', 'other.com.')] });
    const err: unknown = await hosted()
      .byName('Example.com')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZoneNameNotFoundError);
    expect(err).toBeInstanceOf(TerminalError);
    expect((err as ZoneNameNotFoundError).zoneName).toBe('example.com.');
    expect((err as Error).message).not.toMatch(/spec\./);
  });

  it('a name several zones have: AmbiguousZoneNameError with the zones, remembered like a missing one', async () => {
    r53.on(ListHostedZonesByNameCommand).resolves({
      HostedZones: [sdkZone('ZPUB'), { ...sdkZone('ZPRIV'), Config: { PrivateZone: true } }],
    });
    const zones = hosted();
    const err: unknown = await zones.byName('example.com').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AmbiguousZoneNameError);
    expect((err as AmbiguousZoneNameError).zones).toEqual([
      { id: 'ZPUB', name: 'example.com.', private: false },
      { id: 'ZPRIV', name: 'example.com.', private: true },
    ]);
    await expect(zones.byName('example.com.')).rejects.toBeInstanceOf(AmbiguousZoneNameError);
    expect(r53.commandCalls(ListHostedZonesByNameCommand)).toHaveLength(1);
  });
});
