// The per-zone record listing cache alone, with the SDK client mocked and time faked.
import { ListResourceRecordSetsCommand, Route53Client } from '@aws-sdk/client-route-53';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { ZoneRecordCache } from '../../src/providers/route53/zoneRecords.ts';
import { FakeClock } from '../support/fakeClock.ts';

const r53 = mockClient(Route53Client);

describe('ZoneRecordCache', () => {
  let listings = 0;
  beforeEach(() => {
    r53.reset();
    listings = 0;
    r53.on(ListResourceRecordSetsCommand).callsFake(() => {
      listings++;
      return {
        ResourceRecordSets: [
          {
            Name: `r${listings}.example.com.`,
            Type: 'A',
            TTL: 60,
            ResourceRecords: [{ Value: '192.0.2.1' }],
          },
        ],
        IsTruncated: false,
      };
    });
  });

  it('serves a listing up to its age, and a fresher one to a caller that asks for it, shared by callers at once', async () => {
    const clock = new FakeClock();
    const cache = new ZoneRecordCache(new Route53Client({ region: 'us-east-1' }), clock, 30_000);
    await cache.get('Z1');
    clock.advance(5_000);
    expect((await cache.get('Z1')).records.size).toBe(1);
    expect(listings).toBe(1);
    // Five seconds old is too old for a caller that must not miss a record made since.
    const [a, b] = await Promise.all([cache.get('Z1', 1_000), cache.get('Z1', 1_000)]);
    expect(listings).toBe(2);
    expect(a).toBe(b);
    // Just listed: fresh enough for it, and the cache's own age still applies to everyone else.
    clock.advance(500);
    await cache.get('Z1', 1_000);
    expect(listings).toBe(2);
    // A resync may accept an older listing than the cache's own age: one listing serves a zone's
    // whole resync wave (issue 28); everyone else still gets the cache's age.
    clock.advance(40_000);
    await cache.get('Z1', 120_000);
    expect(listings).toBe(2);
    await cache.get('Z1');
    expect(listings).toBe(3);
  });

  it('reads through the client its source answers at each listing (any live identity of the account)', async () => {
    const clock = new FakeClock();
    const [one, two] = [
      new Route53Client({ region: 'us-east-1' }),
      new Route53Client({ region: 'us-east-1' }),
    ];
    let asked = 0;
    const cache = new ZoneRecordCache(() => (asked++ % 2 === 0 ? one : two), clock, 30_000);
    await cache.get('Z1');
    clock.advance(31_000);
    await cache.get('Z1');
    expect(asked).toBe(2);
    expect(r53.commandCalls(ListResourceRecordSetsCommand)).toHaveLength(2);
  });
});
