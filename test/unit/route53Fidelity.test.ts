// The pure parts of the Route 53 fidelity rules the integration tests put in front of moto.
import { describe, expect, it } from 'vitest';
import { recordKey } from '../../src/providers/route53/names.ts';
import { createRefusals, parseChangeBatch, zoneIdOf } from '../../dev/route53Fidelity.ts';

const body = `<?xml version="1.0" encoding="UTF-8"?><ChangeResourceRecordSetsRequest xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><ChangeBatch><Changes><Change><Action>DELETE</Action><ResourceRecordSet><Name>old.example.com.</Name><Type>A</Type><TTL>60</TTL><ResourceRecords><ResourceRecord><Value>192.0.2.1</Value></ResourceRecord></ResourceRecords></ResourceRecordSet></Change><Change><Action>CREATE</Action><ResourceRecordSet><Name>WWW.example.com</Name><Type>A</Type><AliasTarget><HostedZoneId>Z35SXDOTRQ7X7K</HostedZoneId><DNSName>lb.example.net</DNSName><EvaluateTargetHealth>false</EvaluateTargetHealth></AliasTarget></ResourceRecordSet></Change><Change><Action>UPSERT</Action><ResourceRecordSet><Name>_skylift-owner.a.www.example.com.</Name><Type>TXT</Type><SetIdentifier>a&amp;b</SetIdentifier></ResourceRecordSet></Change></Changes></ChangeBatch></ChangeResourceRecordSetsRequest>`;

describe('route53Fidelity', () => {
  it('reads the changes of a ChangeResourceRecordSets body in order, not the alias DNSName', () => {
    expect(parseChangeBatch(body)).toEqual([
      { action: 'DELETE', name: 'old.example.com.', type: 'A' },
      { action: 'CREATE', name: 'WWW.example.com', type: 'A' },
      { action: 'UPSERT', name: '_skylift-owner.a.www.example.com.', type: 'TXT', setIdentifier: 'a&b' },
    ]);
    expect(zoneIdOf({ path: '/2013-04-01/hostedzone/Z123/rrset/' })).toBe('Z123');
  });

  it.each([
    {
      reason: 'a CREATE of a name and type the zone has is refused, as Route 53 words it',
      existing: [recordKey('www.example.com.', 'A')],
      changes: [{ action: 'CREATE', name: 'WWW.example.com', type: 'A' }],
      want: ["Tried to create resource record set [name='www.example.com.', type='A'] but it already exists"],
    },
    {
      reason: 'another type of the same name is a different record set',
      existing: [recordKey('www.example.com.', 'TXT')],
      changes: [{ action: 'CREATE', name: 'www.example.com.', type: 'A' }],
      want: [],
    },
    {
      reason: 'a DELETE earlier in the batch frees the name for a CREATE',
      existing: [recordKey('www.example.com.', 'A')],
      changes: [
        { action: 'DELETE', name: 'www.example.com.', type: 'A' },
        { action: 'CREATE', name: 'www.example.com.', type: 'A' },
      ],
      want: [],
    },
    {
      reason: 'a CREATE after an UPSERT of the same record set in one batch is refused',
      existing: [],
      changes: [
        { action: 'UPSERT', name: 'x.example.com.', type: 'A' },
        { action: 'CREATE', name: 'x.example.com.', type: 'A' },
      ],
      want: ["Tried to create resource record set [name='x.example.com.', type='A'] but it already exists"],
    },
    {
      reason: 'weighted sets are told apart by their set identifier',
      existing: [recordKey('w.example.com.', 'A', 'blue')],
      changes: [
        { action: 'CREATE', name: 'w.example.com.', type: 'A', setIdentifier: 'green' },
        { action: 'CREATE', name: 'w.example.com.', type: 'A', setIdentifier: 'blue' },
      ],
      want: [
        "Tried to create resource record set [name='w.example.com.', type='A', set-identifier='blue'] but it already exists",
      ],
    },
  ])('$reason', ({ existing, changes, want }) => {
    expect(createRefusals(new Set(existing), changes)).toEqual(want);
  });
});
