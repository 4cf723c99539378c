// Route 53's answers about zones, names and change sizes in a DNSRecord's terms
// (src/kinds/dnsrecord/zones.ts, adapter.ts): the typed facts the providers raise become the
// messages users see, naming the spec field and what to do.
import { GetHostedZoneCommand, ListHostedZonesByNameCommand, Route53Client } from '@aws-sdk/client-route-53';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { recordsTooLargeError } from '../../src/kinds/dnsrecord/adapter.ts';
import { dnsRecordFqdn } from '../../src/kinds/dnsrecord/desired.ts';
import {
  isZoneNameNotFound,
  missingZoneIdError,
  ZoneDirectory,
  zoneLookupError,
} from '../../src/kinds/dnsrecord/zones.ts';
import { AwsRetryableError, AwsTerminalError } from '../../src/providers/aws/errors.ts';
import { ChangeTooLargeError } from '../../src/providers/route53/changeBatcher.ts';
import { isNoSuchHostedZone } from '../../src/providers/route53/errors.ts';
import {
  AmbiguousZoneNameError,
  NoSuchZoneError,
  ZoneNameNotFoundError,
} from '../../src/providers/route53/zones.ts';
import { TerminalError } from '../../src/runtime/errors.ts';
import { FakeClock } from '../support/fakeClock.ts';

const r53 = mockClient(Route53Client);

beforeEach(() => {
  r53.reset();
});

describe('zoneLookupError', () => {
  it('a zone ID that does not exist: the spec.zoneId message, code and cause kept', () => {
    const answer = new Error('No hosted zone found with ID: Z1');
    const err = zoneLookupError(new NoSuchZoneError('Z1', { cause: answer }));
    expect(err).toBeInstanceOf(AwsTerminalError);
    expect((err as Error).message).toBe(missingZoneIdError('Z1').message);
    expect((err as Error).cause).toBe(answer);
    expect(isNoSuchHostedZone(err)).toBe(true);
  });

  it.each([
    {
      reason: 'no zone of the name',
      err: new ZoneNameNotFoundError('example.com.'),
      want: 'spec.zoneName example.com.: no hosted zone of that name in this account: create it (Skylift looks again at the resync period), or delete this DNSRecord and create it in an existing zone (the zone is fixed at create)',
    },
    {
      reason: 'several zones of the name',
      err: new AmbiguousZoneNameError('example.com.', [
        { id: 'ZPUB', name: 'example.com.', private: false },
        { id: 'ZPRIV', name: 'example.com.', private: true },
      ]),
      want: '2 hosted zones are named example.com. (ZPUB public, ZPRIV private): set spec.zoneId instead of zoneName',
    },
  ])('$reason: Terminal, naming the field and the fix', ({ err, want }) => {
    const got = zoneLookupError(err);
    expect(got).toBeInstanceOf(TerminalError);
    expect(got).not.toBeInstanceOf(AwsTerminalError);
    expect((got as Error).message).toBe(want);
  });

  it('leaves any other error as it is', () => {
    const err = new AwsRetryableError(
      'Throttled',
      'look up hosted zone example.com.: slow down',
      'Throttling',
    );
    expect(zoneLookupError(err)).toBe(err);
  });

  it('a name no zone has stays recognisable as such once reported (isZoneNameNotFound), and nothing else is', () => {
    const missing = new ZoneNameNotFoundError('example.com.');
    expect(isZoneNameNotFound(missing)).toBe(true);
    expect(isZoneNameNotFound(zoneLookupError(missing))).toBe(true);
    expect(isZoneNameNotFound(zoneLookupError(new NoSuchZoneError('Z1')))).toBe(false);
    expect(
      isZoneNameNotFound(new TerminalError('spec.zoneName example.com.: no hosted zone of that name')),
    ).toBe(false);
  });
});

describe('ZoneDirectory.resolve', () => {
  function directory(): ZoneDirectory {
    return new ZoneDirectory(new Route53Client({ region: 'us-east-1' }), new FakeClock());
  }

  it('by zoneName: a name no zone has is the spec.zoneName message', async () => {
    r53.on(ListHostedZonesByNameCommand).resolves({ HostedZones: [] });
    await expect(directory().resolve({ zoneName: 'No-Such.example' })).rejects.toThrow(
      'spec.zoneName no-such.example.: no hosted zone of that name in this account: create it',
    );
  });

  it('by zoneId first, when both are set', async () => {
    r53.on(GetHostedZoneCommand).resolves({
      HostedZone: { Id: '/hostedzone/Z1', Name: 'example.com.', CallerReference: 'x' },
      DelegationSet: { NameServers: [] },
    });
    await expect(directory().resolve({ zoneId: '/hostedzone/Z1', zoneName: 'other.com' })).resolves.toEqual({
      id: 'Z1',
      name: 'example.com.',
      private: false,
    });
    expect(r53.commandCalls(ListHostedZonesByNameCommand)).toHaveLength(0);
  });

  it('neither set: Terminal, asking for one', async () => {
    await expect(directory().resolve({})).rejects.toThrow(
      new TerminalError('set spec.zoneId or spec.zoneName'),
    );
    expect(r53.calls()).toHaveLength(0);
  });
});

describe('dnsRecordFqdn', () => {
  it('is recordFqdn for a name inside the zone', () => {
    expect(dnsRecordFqdn('www', 'example.com')).toBe('www.example.com.');
  });

  it('a name outside the zone: Terminal, naming spec.name and the fix', () => {
    expect(() => dnsRecordFqdn('www.other.org.', 'example.com')).toThrow(
      new TerminalError(
        'spec.name "www.other.org." is not inside zone example.com.: the name and the zone are fixed at create, so delete this DNSRecord and create one whose spec.name is in example.com. (a relative name such as "www" is placed in the zone)',
      ),
    );
  });
});

describe('recordsTooLargeError', () => {
  it('names spec.records, the weight and the limits', () => {
    const err = recordsTooLargeError(new ChangeTooLargeError({ records: 1200, chars: 40_000 }));
    expect(err).toBeInstanceOf(TerminalError);
    expect(err.message).toBe(
      'spec.records is too large for one Route 53 change (1200 records, 40000 value characters; the limits are 1000 and 32000, UPSERT counted twice): shorten or reduce spec.records',
    );
  });
});
