// Which account an assumed role's session keys belong to, learnt from the STS AssumeRole answers
// passing through the fault proxy: the proxy sees only access keys, and an operator holding
// several sessions of one account must still share that account's Route 53 quota.
import type { FaultRule } from '../../dev/awsFaultProxy.ts';
import type { AwsCall } from '../../dev/awsOperation.ts';

/** The session's access key and account in an AssumeRole answer (STS query XML), if it is one. Pure. */
export function assumedSession(body: string): { accessKeyId: string; account: string } | undefined {
  const accessKeyId = /<AccessKeyId>([^<]+)<\/AccessKeyId>/.exec(body)?.[1];
  const account = /<Arn>arn:aws[a-z-]*:sts::(\d{12}):assumed-role\//.exec(body)?.[1];
  return accessKeyId !== undefined && account !== undefined
    ? { accessKeyId: accessKeyId.trim(), account }
    : undefined;
}

/** Access key → account of every session STS handed out through the proxy since this was made. */
export class SessionAccounts {
  private readonly accounts = new Map<string, string>();

  /**
   * The proxy rule that reads AssumeRole answers (and passes them on unchanged). Its calls are
   * recorded with outcome `rewrite`; they are still counted by operation.
   */
  rule(): FaultRule {
    return {
      service: 'sts',
      operation: 'AssumeRole',
      fault: {
        kind: 'rewrite',
        rewrite: (body) => {
          const s = assumedSession(body);
          if (s !== undefined) this.accounts.set(s.accessKeyId, s.account);
          return body;
        },
      },
    };
  }

  /** The account of the call's session, or its access key when it is not an assumed role's. */
  readonly bucketOf = (call: AwsCall): string => {
    const key = call.accessKeyId ?? '';
    return this.accounts.get(key) ?? key;
  };
}
