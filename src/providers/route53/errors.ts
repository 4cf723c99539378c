import { awsErrorCode } from '../aws/errors.ts';

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
