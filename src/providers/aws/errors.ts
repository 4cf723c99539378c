import { RetryableError, TerminalError, throttledReason } from '../../runtime/errors.ts';

/** The reasons of the retryable errors a failed AWS call becomes (docs/troubleshooting.md explains each). */
export const AwsReason = {
  /** AWS throttled the call: it was not carried out; retried with backoff. */
  Throttled: throttledReason,
  /** AWS failed in a way worth retrying (5xx, network, an unknown error). */
  AwsError: 'AWSError',
  /** AWS refused the operator's credentials (fixed in its IAM setup, not by a retry; retried). */
  AwsCredentials: 'AWSCredentials',
  /** The AWS endpoint did not answer (connection refused, reset or timed out); retried. */
  AwsUnreachable: 'AWSUnreachable',
} as const;

/** How an AWS error should be treated. */
export type AwsErrorClass =
  'throttling' | 'transient' | 'unreachable' | 'credentials' | 'terminal' | 'unknown';

/** Codes AWS uses for "slow down" across services (smithy's list plus service-specific ones). */
export const throttlingCodes: readonly string[] = [
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottledException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'TransactionInProgressException',
  'RequestLimitExceeded',
  'BandwidthLimitExceeded',
  'LimitExceededException',
  'RequestThrottled',
  'SlowDown',
  'PriorRequestNotComplete',
  'EC2ThrottledException',
];

/** Codes that mean "try again": server-side trouble and timeouts. */
export const transientCodes: readonly string[] = [
  'InternalFailure',
  'InternalError',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'RequestTimeout',
  'RequestTimeoutException',
  'IDPCommunicationError',
];

/**
 * Network-level error codes (Node, and the SDK's own `TimeoutError` when a
 * connection or request outlives its timeout): the endpoint did not answer,
 * and the request may or may not have reached AWS.
 */
export const networkErrorCodes: readonly string[] = [
  'TimeoutError',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
];

/**
 * Codes no retry will fix: the request itself is wrong, or not allowed.
 * Quotas are terminal too (PRODUCT.md): retrying will not raise them.
 */
export const terminalCodes: readonly string[] = [
  'ValidationError',
  'ValidationException',
  'InvalidParameterValue',
  'InvalidParameterValueException',
  'InvalidParameterCombination',
  'InvalidParameter',
  'InvalidParameterException',
  'MissingParameter',
  'InvalidInput',
  'InvalidAction',
  'AccessDenied',
  'AccessDeniedException',
  'UnauthorizedOperation',
  'OptInRequired',
];

/**
 * Codes that mean the operator's own credentials were refused (unknown key,
 * bad signature, expired token): fixed in its IAM role or IRSA setup, not in
 * the spec, so retried with backoff.
 */
export const credentialCodes: readonly string[] = [
  'UnrecognizedClientException',
  'InvalidClientTokenId',
  'SignatureDoesNotMatch',
  'IncompleteSignature',
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidAccessKeyId',
  'AuthFailure',
];

/** The error code of an SDK (or network) error, if it has one. Pure. */
export function awsErrorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { name?: unknown; code?: unknown; Code?: unknown };
  if (typeof e.code === 'string' && networkErrorCodes.includes(e.code)) return e.code;
  if (typeof e.Code === 'string') return e.Code;
  if (typeof e.name === 'string' && e.name !== 'Error') return e.name;
  return typeof e.code === 'string' ? e.code : undefined;
}

function httpStatus(err: unknown): number | undefined {
  const m = (err as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata;
  return typeof m?.httpStatusCode === 'number' ? m.httpStatusCode : undefined;
}

/**
 * Classifies an AWS error from the generic tables plus a service's own
 * (`extra`, checked first). Unknown 4xx errors are 'unknown' (the caller
 * retries them with backoff); 5xx are transient. Pure.
 */
export function classifyAwsError(
  err: unknown,
  extra: { readonly terminal?: readonly string[]; readonly transient?: readonly string[] } = {},
): AwsErrorClass {
  const code = awsErrorCode(err);
  if (code !== undefined) {
    // RDS names an error DBSnapshotNotFound in its answer and DBSnapshotNotFoundFault in its SDK
    // model (and some emulators answer with the latter): a table entry matches either.
    const base = withoutSuffix(code);
    const listed = (codes: readonly string[] | undefined): boolean =>
      codes?.some((c) => c === code || withoutSuffix(c) === base) === true;
    if (listed(extra.terminal)) return 'terminal';
    if (listed(extra.transient)) return 'transient';
    if (listed(throttlingCodes)) return 'throttling';
    if (listed(credentialCodes)) return 'credentials';
    if (networkErrorCodes.includes(code)) return 'unreachable';
    if (listed(transientCodes)) return 'transient';
    if (listed(terminalCodes)) return 'terminal';
  }
  const status = httpStatus(err);
  if (status === 429) return 'throttling';
  if (status !== undefined && status >= 500) return 'transient';
  return 'unknown';
}

/** The condition reason of each retryable class: what a failed call of that class is shown as. */
export const retryReasons: Readonly<Record<Exclude<AwsErrorClass, 'terminal'>, string>> = {
  throttling: AwsReason.Throttled,
  credentials: AwsReason.AwsCredentials,
  unreachable: AwsReason.AwsUnreachable,
  transient: AwsReason.AwsError,
  unknown: AwsReason.AwsError,
};

/** What to tell a user beside a retryable error, by class (undefined: the error says enough). */
export const retryAdvice: Readonly<Partial<Record<AwsErrorClass, string>>> = {
  credentials:
    'the AWS credentials the operator uses were refused: check its IAM role, IRSA annotation and clock',
  unreachable: 'the AWS endpoint did not answer',
};

/** The condition reason a retryable AWS error of `cls` is shown with (AWSError for 'terminal', never asked). Pure. */
export function retryReasonOf(cls: AwsErrorClass): string {
  return cls === 'terminal' ? AwsReason.AwsError : retryReasons[cls];
}

/** What AWS itself said, kept beside the message of an {@link AwsTerminalError}. */
export interface AwsRefusalFacts {
  /** AWS's own message, verbatim. */
  readonly awsMessage?: string;
  /** The API operation AWS refused, e.g. CreateDBInstance (from the client's middleware). */
  readonly operation?: string;
  /** Skylift's step ("create DB instance sky-…"). */
  readonly step?: string;
}

/**
 * An AWS error that no retry fixes, keeping the AWS code and, when AWS wrote
 * the message, AWS's own words (a kind's refusal table turns them into a
 * message naming the spec field and a fix).
 */
export class AwsTerminalError extends TerminalError {
  readonly code: string | undefined;
  readonly awsMessage: string | undefined;
  readonly operation: string | undefined;
  readonly step: string | undefined;
  constructor(message: string, code: string | undefined, options?: ErrorOptions & AwsRefusalFacts) {
    super(message, options);
    this.code = code;
    this.awsMessage = options?.awsMessage;
    this.operation = options?.operation;
    this.step = options?.step;
  }
}

const operationTag = '$skyliftOperation';

/**
 * Records on an SDK error which API operation it answered (the clients'
 * middleware calls it; the SDK's errors do not say). Leaves non-objects alone.
 */
export function tagOperation(err: unknown, operation: string): void {
  if (typeof err === 'object' && err !== null && !(operationTag in err))
    Object.defineProperty(err, operationTag, { value: operation, enumerable: false });
}

/** The API operation an SDK error answered, if the clients' middleware recorded it. Pure. */
export function awsErrorOperation(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const op = (err as Record<string, unknown>)[operationTag];
  return typeof op === 'string' ? op : undefined;
}

/** An AWS error worth retrying with backoff, keeping the AWS code. */
export class AwsRetryableError extends RetryableError {
  readonly code: string | undefined;
  constructor(reason: string, message: string, code: string | undefined, options?: ErrorOptions) {
    super(reason, message, options);
    this.code = code;
  }
}

/**
 * Turns an AWS error into the engine's typed errors: `what` names the step
 * ("create load balancer"). Throttling → retryable with reason Throttled;
 * terminal → TerminalError; everything else → retryable. Pure.
 */
export function toTypedAwsError(
  what: string,
  err: unknown,
  extra?: Parameters<typeof classifyAwsError>[1],
): AwsTerminalError | AwsRetryableError {
  const code = awsErrorCode(err);
  const detail = err instanceof Error ? err.message : String(err);
  const message = `${what}: ${code !== undefined && !detail.includes(code) ? `${code}: ` : ''}${detail}`;
  const cls = classifyAwsError(err, extra);
  switch (cls) {
    case 'terminal': {
      const operation = awsErrorOperation(err);
      return new AwsTerminalError(message, code, {
        cause: err,
        awsMessage: detail,
        step: what,
        ...(operation !== undefined ? { operation } : {}),
      });
    }
    default: {
      const advice = retryAdvice[cls];
      return new AwsRetryableError(
        retryReasons[cls],
        advice !== undefined ? `${message} (${advice}; Skylift retries with backoff)` : message,
        code,
        { cause: err },
      );
    }
  }
}

/** A code without the `Fault` / `Exception` suffix some services and SDK models add. Pure. */
function withoutSuffix(code: string): string {
  return code.replace(/(Fault|Exception)$/, '');
}

/** The error code without the `Fault` / `Exception` suffix some services and SDK versions add. Pure. */
export function baseErrorCode(err: unknown): string | undefined {
  return awsErrorCode(err)?.replace(/(Fault|Exception)$/, '');
}

/** True when the error's code (suffix aside) is one of `codes`. Pure. */
export function hasErrorCode(err: unknown, ...codes: readonly string[]): boolean {
  const code = baseErrorCode(err);
  return code !== undefined && codes.includes(code);
}
