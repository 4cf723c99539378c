// The bench's Route 53 propagation (bench/lib/propagation.ts): changes answer PENDING until their
// time is up, then INSYNC; each record's Ready time is measured from the first INSYNC answer of
// the last change naming it.
import { describe, expect, it } from 'vitest';
import { changedNames, changeIdIn, Propagation } from '../../bench/lib/propagation.ts';
import type { AwsCall } from '../../dev/awsOperation.ts';

const changeAnswer = (id: string): string =>
  `<ChangeResourceRecordSetsResponse><ChangeInfo><Id>/change/${id}</Id><Status>INSYNC</Status></ChangeInfo></ChangeResourceRecordSetsResponse>`;
const getChangeAnswer = (id: string): string =>
  `<GetChangeResponse><ChangeInfo><Id>/change/${id}</Id><Status>INSYNC</Status></ChangeInfo></GetChangeResponse>`;
const changeBody = (...names: string[]): string =>
  `<ChangeBatch><Changes>${names.map((n) => `<Change><Action>UPSERT</Action><ResourceRecordSet><Name>${n}</Name><Type>A</Type></ResourceRecordSet></Change>`).join('')}</Changes></ChangeBatch>`;

/** The change ID an answer carries. */
const idOf = (answer: string): string => changeIdIn(answer) ?? '';

const call = (operation: string, path: string, body = ''): AwsCall => ({
  service: 'route53',
  operation,
  method: operation === 'GetChange' ? 'GET' : 'POST',
  path,
  body,
});

describe('bench propagation', () => {
  it('reads change IDs and record names off the wire', () => {
    expect(changeIdIn('/2013-04-01/change/C2682N5HXP0BZ4')).toBe('C2682N5HXP0BZ4');
    expect(changeIdIn('<Id>/change/ABC</Id>')).toBe('ABC');
    expect(changeIdIn('<Error/>')).toBeUndefined();
    expect(changedNames(changeBody('R1.Zone.example.', 'r2.zone.example'))).toEqual([
      'r1.zone.example',
      'r2.zone.example',
    ]);
  });

  it('answers PENDING until the change is due, then INSYNC, and measures Ready from the first INSYNC answer', () => {
    let now = 1000;
    const p = new Propagation(10_000, () => now);
    const submitted = p.answer(
      changeAnswer('C1'),
      call(
        'ChangeResourceRecordSets',
        '/2013-04-01/hostedzone/Z/rrset',
        changeBody('a.z.example.', 'b.z.example.'),
      ),
    );
    expect(submitted).toContain('<Status>PENDING</Status>');
    const id = idOf(submitted);
    // GetChange as moto answers it: the ID asked for, INSYNC.
    const getChange = (): string =>
      p.answer(getChangeAnswer(id), call('GetChange', `/2013-04-01/change/${id}`));
    now = 6000;
    expect(getChange()).toContain('PENDING');
    now = 11_500;
    expect(getChange()).toContain('INSYNC');
    now = 13_000;
    // A later INSYNC answer does not move the first.
    getChange();
    const r = p.result(
      new Map([
        ['a.z.example', 12_000],
        ['b.z.example', 14_500],
        ['c.z.example', 14_000],
      ]),
    );
    expect(r.changes).toBe(1);
    expect(r.getChangeCalls).toBe(3);
    expect(r.readyAfterInsyncAnswerMs).toEqual({ count: 2, p50: 500, p95: 3000, max: 3000 });
    expect(r.readyAfterInsyncMs).toEqual({ count: 2, p50: 1000, p95: 3500, max: 3500 });
    expect(r.unmatched).toBe(1);
  });

  it('takes the last change naming a record that was INSYNC before it was Ready', () => {
    let now = 0;
    const p = new Propagation(1000, () => now);
    // moto gives every change the same ID; the bench gives each its own.
    const submit = (): string =>
      idOf(
        p.answer(
          changeAnswer('C1'),
          call('ChangeResourceRecordSets', '/x/rrset', changeBody('a.z.example.')),
        ),
      );
    const first = submit();
    now = 500;
    const second = submit();
    expect(second).not.toBe(first);
    now = 2000;
    p.answer(getChangeAnswer(first), call('GetChange', `/2013-04-01/change/${first}`));
    now = 3000;
    p.answer(getChangeAnswer(second), call('GetChange', `/2013-04-01/change/${second}`));
    const r = p.result(new Map([['a.z.example', 3200]]));
    expect(r.readyAfterInsyncAnswerMs.max).toBe(200);
    expect(r.readyAfterInsyncMs.max).toBe(1700);
  });

  it('leaves a refused batch (an error answer without a change) as it is', () => {
    const p = new Propagation(1000, () => 0);
    const error = '<ErrorResponse><Error><Code>InvalidChangeBatch</Code></Error></ErrorResponse>';
    expect(p.answer(error, call('ChangeResourceRecordSets', '/x/rrset', changeBody('a.z.example.')))).toBe(
      error,
    );
    expect(p.result(new Map()).changes).toBe(0);
  });
});
