import { AwsRetryableError, AwsTerminalError, awsErrorCode, hasErrorCode } from '../aws/errors.ts';

/** Route 53 codes no retry fixes (beyond the generic table). */
export const route53Terminal: readonly string[] = [
  'InvalidChangeBatch',
  'InvalidInput',
  'NoSuchHostedZone',
  'InvalidDomainName',
  'InvalidArgument',
];

/** Route 53 codes worth retrying (beyond the generic table). */
export const route53Transient: readonly string[] = ['PriorRequestNotComplete', 'HostedZoneNotFound'];

/** The table to pass to classifyAwsError for Route 53. */
export const route53ErrorTable = { terminal: route53Terminal, transient: route53Transient } as const;

/** "Tried to create resource record set … but it already exists": someone else's record. Pure. */
export function isAlreadyExists(err: unknown): boolean {
  return (
    awsErrorCode(err) === 'InvalidChangeBatch' &&
    /already exists/i.test(err instanceof Error ? err.message : '')
  );
}

/** A DELETE of something that is not there (any more). Pure. */
export function isNotFoundOnDelete(err: unknown): boolean {
  const msg = err instanceof Error ? err.message : '';
  return /not found|but it was not found|found none/i.test(msg);
}

/**
 * True when Route 53 answered that the hosted zone a call named does not exist (NoSuchHostedZone),
 * whether `err` is the SDK's error or a typed error made from it (its `code`, or a `cause` down the
 * chain). Pure.
 */
export function isNoSuchHostedZone(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 8 && e !== undefined && e !== null; depth++) {
    if (hasErrorCode(e, 'NoSuchHostedZone')) return true;
    if ((e instanceof AwsTerminalError || e instanceof AwsRetryableError) && e.code === 'NoSuchHostedZone')
      return true;
    e = e instanceof Error ? e.cause : undefined;
  }
  return false;
}
