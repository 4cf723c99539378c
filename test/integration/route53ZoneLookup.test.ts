// Regression test for a bug `make chaos` found: a hosted zone lookup by name
// that failed for a transient reason (throttling, 5xx, a dropped connection)
// was cached like a missing zone, so every DNSRecord in that zone kept failing
// with the same error for the negative TTL (30 s) without asking Route 53
// again, while each one's backoff grew. Only "no such zone" answers may be
// remembered.
import { randomBytes } from 'node:crypto';
import { Route53Client } from '@aws-sdk/client-route-53';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZoneDirectory } from '../../src/kinds/dnsrecord/zones.ts';
import { realClock } from '../../src/runtime/clock.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { createZone, route53At } from '../support/dns.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';

let proxy: AwsFaultProxy;
beforeAll(async () => {
  proxy = await startFaultProxy();
});
afterAll(async () => {
  await proxy.stop();
});

describe('ZoneDirectory', () => {
  it.each([
    { reason: 'throttled', fault: { kind: 'throttle' as const } },
    { reason: 'answered 503', fault: { kind: 'error' as const, status: 503 } },
  ])('asks Route 53 again after a lookup by name was $reason', async ({ fault }) => {
    const zone = `lookup-${randomBytes(3).toString('hex')}.example.com`;
    const zoneId = await createZone(route53At(stackInfo().awsEndpoint), zone);
    // One SDK attempt per call, so the injected fault reaches the directory as the operator sees
    // it once the SDK's own retries are used up.
    const directory = new ZoneDirectory(new Route53Client(awsClientConfig(proxy.endpoint, 1)), realClock);
    proxy.resetCalls();
    proxy.inject({ service: 'route53', operation: 'ListHostedZonesByName', fault, times: 1 });

    await expect(directory.resolve({ zoneName: zone })).rejects.toThrow(/look up hosted zone/);
    // Route 53 is fine again: the next lookup must reach it and find the zone.
    await expect(directory.resolve({ zoneName: zone })).resolves.toMatchObject({ id: zoneId });
    expect(proxy.count({ service: 'route53', operation: 'ListHostedZonesByName' })).toBe(2);
  });
});
