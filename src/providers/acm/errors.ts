import { hasErrorCode } from '../aws/errors.ts';
import { RequeueAfter } from '../../runtime/errors.ts';

/** ACM codes no retry fixes (beyond the generic table). */
export const acmTerminal: readonly string[] = [
  'InvalidArnException',
  'InvalidParameterException',
  'ValidationException',
  'ResourceNotFoundException',
];

/** The table to pass to classifyAwsError for ACM. */
export const acmErrorTable = { terminal: acmTerminal } as const;

/**
 * ACM codes of the calls that import, tag and delete certificates, beyond {@link acmTerminal} and
 * the generic tables. LimitExceededException is ACM's quota of certificates (terminal: a retry
 * does not raise it; the generic table has it as throttling, which ACM answers with
 * ThrottlingException). ConflictException (a tag or certificate changed by a concurrent request)
 * and RequestInProgressException are retried.
 */
export const acmImportErrorTable = {
  terminal: [
    ...acmTerminal,
    'LimitExceededException',
    'InvalidTagException',
    'TooManyTagsException',
    'TagPolicyException',
  ],
  transient: ['ConflictException', 'RequestInProgressException'],
} as const;

/** ACM refuses to delete a certificate an AWS resource (a load balancer's listener) still uses. */
export const acmInUseCodes: readonly string[] = ['ResourceInUse'];
/** ACM has no certificate of that ARN (deleted, or never existed). */
export const acmNotFoundCodes: readonly string[] = ['ResourceNotFound'];
/** AWS refused the call for want of a permission. */
export const accessDeniedCodes: readonly string[] = ['AccessDenied'];

/** Whether `err` says the certificate is in use (ResourceInUseException). Pure. */
export function isCertificateInUse(err: unknown): boolean {
  return hasCode(err, acmInUseCodes);
}

/** Whether `err` says there is no such certificate (ResourceNotFoundException). Pure. */
export function isCertificateNotFound(err: unknown): boolean {
  return hasCode(err, acmNotFoundCodes);
}

/** Whether `err` is a refusal for want of a permission, raw or typed by awsCall. Pure. */
export function isAccessDenied(err: unknown): boolean {
  return hasCode(err, accessDeniedCodes);
}

/**
 * The code of `err`, without its Fault/Exception suffix, is one of `codes`: for an SDK error, or
 * the engine's typed error made from one (its `code`, or its cause's). Pure.
 */
function hasCode(err: unknown, codes: readonly string[]): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if (hasErrorCode(e, ...codes)) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && codes.includes(code.replace(/(Fault|Exception)$/, ''))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** How long a release waits before trying again to delete certificates a listener still used. */
export const certificateInUseRequeueMs = 30_000;

/** The condition reason of {@link CertificateInUseError}. */
export const certificateInUseReason = 'CertificateInUse';

/**
 * Some certificates to delete are still used (a listener serves them; ACM answered
 * ResourceInUseException): not a failure but a wait, until whatever uses them moves to another
 * certificate. Requeue after {@link certificateInUseRequeueMs}.
 */
export class CertificateInUseError extends RequeueAfter {
  /** The certificates ACM would not delete. */
  readonly arns: readonly string[];
  constructor(arns: readonly string[], delayMs = certificateInUseRequeueMs) {
    super(
      delayMs,
      `ACM certificate${arns.length === 1 ? '' : 's'} ${arns.join(', ')} still in use (a listener serves ${arns.length === 1 ? 'it' : 'them'}); deleting again in ${Math.round(delayMs / 1000)} s`,
      certificateInUseReason,
    );
    this.arns = arns;
  }
}
