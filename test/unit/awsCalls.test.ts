// The AWS call idioms of src/providers/aws/calls.ts, with plain async
// functions standing in for SDK calls and errors shaped like the SDK's.
import { describe, expect, it } from 'vitest';
import { ownershipTagMap, type OwnershipTags } from '../../src/apis/managed.ts';
import { awsCall, createOrFind, lookup, type Found } from '../../src/providers/aws/calls.ts';
import {
  AwsReason,
  AwsRetryableError,
  AwsTerminalError,
  hasErrorCode,
} from '../../src/providers/aws/errors.ts';
import { OwnershipConflictError, RetryableError, TerminalError } from '../../src/runtime/errors.ts';

/** An error as the SDK throws it: its name is the AWS code. */
function sdkError(name: string, message = `${name} happened`, status = 400): Error {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });
}

const ours: OwnershipTags = { cluster: 'prod', owner: 'shop/db', uid: 'uid-ours' };
const theirs: OwnershipTags = { cluster: 'prod', owner: 'other/db', uid: 'uid-theirs' };

const noTable = {};

/** What `fn` rejects with (fails the test when it resolves). */
async function rejection(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('awsCall', () => {
  it('resolves to what the call resolves to', async () => {
    await expect(awsCall('describe instance', noTable, () => Promise.resolve(42))).resolves.toBe(42);
  });

  it.each([
    {
      reason: 'throttling is retryable, reason Throttled',
      err: sdkError('Throttling', 'Rate exceeded'),
      type: AwsRetryableError,
      retryReason: AwsReason.Throttled,
    },
    {
      reason: 'an unknown 4xx is retryable, reason AWSError',
      err: sdkError('DBInstanceNotFoundFault', 'not there'),
      type: AwsRetryableError,
      retryReason: AwsReason.AwsError,
    },
    {
      reason: 'a 5xx is retryable, reason AWSError',
      err: sdkError('InternalFailure', 'oops', 500),
      type: AwsRetryableError,
      retryReason: AwsReason.AwsError,
    },
    {
      reason: 'a validation error is terminal',
      err: sdkError('ValidationError', 'bad name'),
      type: AwsTerminalError,
      retryReason: undefined,
    },
    {
      reason: 'access denied is terminal',
      err: sdkError('AccessDenied', 'not allowed'),
      type: AwsTerminalError,
      retryReason: undefined,
    },
  ])('types a failure: $reason', async ({ err, type, retryReason }) => {
    const got = await rejection(() => awsCall('create instance db-1', noTable, () => Promise.reject(err)));
    expect(got).toBeInstanceOf(type);
    expect((got as Error).message.startsWith('create instance db-1: ')).toBe(true);
    expect((got as Error).cause).toBe(err);
    expect((got as AwsRetryableError | AwsTerminalError).code).toBe(err.name);
    if (retryReason === undefined) {
      expect(got).toBeInstanceOf(TerminalError);
    } else {
      expect(got).toBeInstanceOf(RetryableError);
      expect((got as RetryableError).reason).toBe(retryReason);
    }
  });

  it("classifies with the service's table first", async () => {
    const table = { terminal: ['StorageQuotaExceeded'] };
    const err = sdkError('StorageQuotaExceeded', 'quota');
    await expect(awsCall('create', table, () => Promise.reject(err))).rejects.toBeInstanceOf(TerminalError);
    await expect(awsCall('create', noTable, () => Promise.reject(err))).rejects.toBeInstanceOf(
      RetryableError,
    );
  });
});

describe('lookup', () => {
  const isAbsent = (err: unknown): boolean => hasErrorCode(err, 'DBInstanceNotFound');

  it.each([
    { reason: 'an answer', fn: () => Promise.resolve('db-1'), want: 'db-1' },
    {
      reason: 'absent (Fault suffix)',
      fn: () => Promise.reject(sdkError('DBInstanceNotFoundFault')),
      want: undefined,
    },
    {
      reason: 'absent (bare code)',
      fn: () => Promise.reject(sdkError('DBInstanceNotFound')),
      want: undefined,
    },
  ])('resolves $reason', async ({ fn, want }) => {
    await expect(lookup('describe db-1', noTable, isAbsent, fn)).resolves.toBe(want);
  });

  it.each([
    { reason: 'throttling', err: sdkError('Throttling'), type: RetryableError },
    { reason: 'another not-found', err: sdkError('DBSubnetGroupNotFoundFault'), type: RetryableError },
    { reason: 'access denied', err: sdkError('AccessDenied'), type: TerminalError },
  ])('types any other failure: $reason', async ({ err, type }) => {
    const got = await rejection(() => lookup('describe db-1', noTable, isAbsent, () => Promise.reject(err)));
    expect(got).toBeInstanceOf(type);
    expect((got as Error).message).toMatch(/^describe db-1: /);
  });
});

describe('createOrFind', () => {
  /** A createOrFind whose create and find are scripted, counting the calls to find. */
  function scripted(
    create: () => Promise<string>,
    found: Found<string> | undefined,
  ): { run: () => Promise<string>; finds: () => number } {
    let finds = 0;
    return {
      run: () =>
        createOrFind({
          what: 'create instance db-1',
          table: noTable,
          isDuplicate: (err) => hasErrorCode(err, 'DBInstanceAlreadyExists'),
          create,
          find: () => {
            finds++;
            return Promise.resolve(found);
          },
          ownership: ours,
        }),
      finds: () => finds,
    };
  }

  const duplicate = (): Promise<string> => Promise.reject(sdkError('DBInstanceAlreadyExistsFault', 'taken'));

  it('returns what create returns, without looking', async () => {
    const c = scripted(() => Promise.resolve('created'), { value: 'found', tags: ownershipTagMap(ours) });
    await expect(c.run()).resolves.toBe('created');
    expect(c.finds()).toBe(0);
  });

  it('takes the resource under the taken name when it carries this object’s uid', async () => {
    const c = scripted(duplicate, { value: 'found', tags: { team: 'web', ...ownershipTagMap(ours) } });
    await expect(c.run()).resolves.toBe('found');
    expect(c.finds()).toBe(1);
  });

  it.each([
    {
      reason: "another namespace's object's resource, not naming it",
      tags: ownershipTagMap(theirs),
      message:
        'create instance db-1: the name is taken by a resource owned by a Skylift object in another namespace',
    },
    {
      reason: "an object's of the same namespace, naming it",
      tags: ownershipTagMap({ ...theirs, owner: 'shop/old-db' }),
      message: 'create instance db-1: the name is taken by a resource owned by shop/old-db (uid uid-theirs)',
    },
    {
      reason: 'a resource without ownership tags',
      tags: { team: 'web' },
      message: 'create instance db-1: the name is taken by a resource Skylift does not manage',
    },
    {
      reason: 'a resource whose uid tag is empty',
      tags: { ...ownershipTagMap(ours), 'skylift.dev/uid': '' },
      message: 'create instance db-1: the name is taken by a resource Skylift does not manage',
    },
  ])('refuses $reason with an OwnershipConflictError', async ({ tags, message }) => {
    const c = scripted(duplicate, { value: 'found', tags });
    const got = await rejection(c.run);
    expect(got).toBeInstanceOf(OwnershipConflictError);
    expect((got as Error).message).toBe(message);
  });

  it('throws the original duplicate error, typed, when nothing has the name after all', async () => {
    const c = scripted(duplicate, undefined);
    const got = await rejection(c.run);
    expect(got).toBeInstanceOf(AwsRetryableError);
    expect((got as AwsRetryableError).code).toBe('DBInstanceAlreadyExistsFault');
    expect((got as Error).message).toBe('create instance db-1: DBInstanceAlreadyExistsFault: taken');
    expect(c.finds()).toBe(1);
  });

  it.each([
    { reason: 'a throttle', err: sdkError('Throttling', 'slow down'), type: RetryableError },
    {
      reason: 'a validation error',
      err: sdkError('InvalidParameterValue', 'bad class'),
      type: TerminalError,
    },
  ])('types any other failure of create without looking: $reason', async ({ err, type }) => {
    const c = scripted(() => Promise.reject(err), { value: 'found', tags: ownershipTagMap(ours) });
    const got = await rejection(c.run);
    expect(got).toBeInstanceOf(type);
    expect((got as Error).message).toMatch(/^create instance db-1: /);
    expect(c.finds()).toBe(0);
  });
});
