// IRSA, proven: with no static keys, only AWS_ROLE_ARN and
// AWS_WEB_IDENTITY_TOKEN_FILE (what EKS's pod identity webhook injects), the
// operator's AWS SDK default credential chain calls STS
// AssumeRoleWithWebIdentity with the projected ServiceAccount token and signs
// every later call with the temporary credentials it got back.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { ensureHostedZone } from '../../dev/awsAccount.ts';
import { emulatorCredentials } from '../../dev/emulator.ts';
import { waitFor } from '../../dev/wait.ts';
import { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { route53At } from '../support/dns.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { scratchDir } from '../support/scratch.ts';
import { spawnSkyliftRun, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';

const roleArn = 'arn:aws:iam::123456789012:role/skylift-operator';
let ns: string;
let proxy: AwsFaultProxy;
let operator: SkyliftProcess | undefined;

beforeAll(async () => {
  const admin = kubeClient();
  await installCrds(admin);
  ns = await newNamespace(admin, 'e2e-irsa');
  await ensureHostedZone(route53At(stackInfo().awsEndpoint), 'example.com');
  proxy = await AwsFaultProxy.start({ target: stackInfo().awsEndpoint });
});

afterAll(async () => {
  await operator?.stop();
  await proxy.stop();
});

describe('IRSA', () => {
  it('assumes the role with the web-identity token and signs every call with the assumed credentials', async () => {
    const kc = stackInfo().adminKubeconfig;
    // A real bound ServiceAccount token with the audience EKS uses for IRSA.
    await kubectl(kc, ['create', 'serviceaccount', 'skylift', '-n', ns]);
    const token = await kubectl(kc, [
      'create',
      'token',
      'skylift',
      '-n',
      ns,
      '--audience=sts.amazonaws.com',
      '--duration=1h',
    ]);
    expect(token.code, token.stderr).toBe(0);
    const tokenFile = join(await scratchDir('irsa'), 'token');
    await writeFile(tokenFile, token.stdout.trim());

    const stsBodies: string[] = [];
    proxy.inject({
      service: 'sts',
      match: (call) => {
        stsBodies.push(call.body);
        return false;
      },
      fault: { kind: 'latency', ms: 0 },
    });
    operator = spawnSkyliftRun({
      args: ['--namespaces', ns, '--leader-elect=false'],
      env: {
        AWS_ENDPOINT_URL: proxy.endpoint,
        AWS_REGION: emulatorCredentials.region,
        AWS_ROLE_ARN: roleArn,
        AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
        AWS_ROLE_SESSION_NAME: 'skylift-irsa-test',
        AWS_ACCESS_KEY_ID: undefined,
        AWS_SECRET_ACCESS_KEY: undefined,
        AWS_SESSION_TOKEN: undefined,
        AWS_PROFILE: undefined,
        AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
        AWS_CONFIG_FILE: '/nonexistent',
      },
    });
    const op = operator;
    await waitFor(() => (op.output().includes('controllers started') ? true : undefined), {
      timeoutMs: 30_000,
      description: 'skylift run started',
    });
    const applied = await kubectl(
      kc,
      ['apply', '-n', ns, '-f', '-'],
      JSON.stringify({
        apiVersion: 'aws.skylift.dev/v1alpha1',
        kind: 'DNSRecord',
        metadata: { name: 'irsa' },
        spec: { zoneName: 'example.com', name: `irsa-${ns}`, type: 'A', records: ['192.0.2.7'] },
      }),
    );
    expect(applied.code, applied.stderr).toBe(0);
    const ready = await kubectl(kc, [
      'wait',
      '-n',
      ns,
      '--for=condition=Ready',
      'dnsrecord/irsa',
      '--timeout=90s',
    ]);
    expect(ready.code, `${ready.stderr}\n${op.output().slice(-2000)}`).toBe(0);

    // Deleted while the operator runs: the shared zone keeps nothing of this test.
    const deleted = await kubectl(kc, ['delete', '-n', ns, 'dnsrecord/irsa', '--timeout=60s']);
    expect(deleted.code, `${deleted.stderr}\n${op.output().slice(-2000)}`).toBe(0);

    const calls = proxy.calls();
    const sts = calls.filter((c) => c.service === 'sts');
    // Each SDK client's credential chain assumes the role once (Route 53's, and STS's own for the
    // one GetCallerIdentity that records which account the operator's resources live in).
    const webIdentity = sts.filter((c) => c.operation === 'AssumeRoleWithWebIdentity');
    expect(webIdentity.length).toBeGreaterThanOrEqual(1);
    expect(sts.filter((c) => c.operation !== 'AssumeRoleWithWebIdentity').map((c) => c.operation)).toEqual([
      'GetCallerIdentity',
    ]);
    for (const c of webIdentity) expect(c.accessKeyId).toBeUndefined(); // the web-identity call is not signed
    // The request carried the role and the very token the operator was given.
    const stsBody = new URLSearchParams(stsBodies[0] ?? '');
    expect(stsBody.get('Action')).toBe('AssumeRoleWithWebIdentity');
    expect(stsBody.get('RoleArn')).toBe(roleArn);
    expect(stsBody.get('WebIdentityToken')).toBe(token.stdout.trim());
    const route53 = calls.filter((c) => c.service === 'route53');
    expect(route53.length).toBeGreaterThan(0);
    const signed = [...route53, ...sts.filter((c) => c.operation === 'GetCallerIdentity')];
    const keys = new Set(signed.map((c) => c.accessKeyId));
    expect(keys.size).toBeGreaterThanOrEqual(1);
    for (const assumedKey of keys) {
      expect(assumedKey).toMatch(/^ASIA/); // temporary credentials, not the emulator's static key
      expect(assumedKey).not.toBe(emulatorCredentials.accessKeyId);
    }
    // STS came first: nothing was signed before the role was assumed.
    expect(calls.findIndex((c) => c.service === 'sts')).toBeLessThan(
      calls.findIndex((c) => c.service === 'route53'),
    );
  });
});
