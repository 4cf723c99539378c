// Skylift's own kubeconfig authentication against the real kube-apiserver: client certificates
// signed by the stack's CA (files with relative paths, in a YAML kubeconfig), a token file, and exec
// credential plugins handing out a token or a client certificate. The apiserver says who it
// authenticated (SelfSubjectReview).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../dev/wait.ts';
import { KubeApiError, KubeClient, type KubeClientOptions } from '../../src/runtime/kube/client.ts';
import { loadKubeconfig } from '../../src/runtime/kube/kubeconfigLoad.ts';
import { FakeClock } from '../support/fakeClock.ts';
import { scratchDir } from '../support/scratch.ts';
import { stackInfo } from '../support/stack.ts';

const v1 = 'client.authentication.k8s.io/v1';

/** The user name the apiserver authenticated the client's requests as. */
async function whoami(client: KubeClient): Promise<string> {
  const review = await client.create<{ status: { userInfo: { username: string } } }>(
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  );
  return review.status.userInfo.username;
}

/** A client certificate for `cn`, signed by the stack's CA, written as <name>.crt/.key in `dir`. */
function clientCertificate(dir: string, name: string, cn: string): { cert: string; key: string } {
  const pki = join(dirname(stackInfo().adminKubeconfig), 'pki');
  const p = (ext: string): string => join(dir, `${name}.${ext}`);
  writeFileSync(
    p('ext'),
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n',
  );
  execFileSync(
    'openssl',
    [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      p('key'),
      '-out',
      p('csr'),
      '-subj',
      `/O=skylift:auth-test/CN=${cn}`,
    ],
    { stdio: 'ignore' },
  );
  execFileSync(
    'openssl',
    [
      'x509',
      '-req',
      '-in',
      p('csr'),
      '-CA',
      join(pki, 'ca.crt'),
      '-CAkey',
      join(pki, 'ca.key'),
      '-set_serial',
      `0x${randomBytes(8).toString('hex')}`,
      '-days',
      '1',
      '-out',
      p('crt'),
      '-extfile',
      p('ext'),
    ],
    { stdio: 'ignore' },
  );
  return { cert: readFileSync(p('crt'), 'utf8'), key: readFileSync(p('key'), 'utf8') };
}

/** A YAML kubeconfig in `dir` for the stack's apiserver, its CA as a relative file, with `user` (YAML lines). */
function kubeconfigFile(dir: string, user: readonly string[]): string {
  writeFileSync(join(dir, 'ca.crt'), stackInfo().caPem);
  const path = join(dir, 'kubeconfig.yaml');
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: local',
      '  cluster:',
      `    server: ${stackInfo().server}`,
      '    certificate-authority: ca.crt',
      'users:',
      '- name: tester',
      '  user:',
      ...user.map((l) => `    ${l}`),
      'contexts:',
      '- name: local',
      '  context: {cluster: local, user: tester}',
      'current-context: local',
      '',
    ].join('\n'),
  );
  return path;
}

/**
 * An exec plugin in `dir` (a Node script): its n-th run prints the n-th of `statuses` (the last
 * once they run out) as a v1 ExecCredential's status, and counts its runs.
 */
function execPlugin(dir: string, statuses: readonly Record<string, unknown>[]): { runs: () => number } {
  writeFileSync(join(dir, 'statuses.json'), JSON.stringify(statuses));
  const script = join(dir, 'plugin.cjs');
  writeFileSync(
    script,
    [
      '#!/usr/bin/env node',
      "const fs = require('node:fs');",
      "const p = (f) => require('node:path').join(__dirname, f);",
      "const n = (fs.existsSync(p('count')) ? Number(fs.readFileSync(p('count'), 'utf8')) : 0) + 1;",
      "fs.writeFileSync(p('count'), String(n));",
      "const all = JSON.parse(fs.readFileSync(p('statuses.json'), 'utf8'));",
      `process.stdout.write(JSON.stringify({ apiVersion: '${v1}', kind: 'ExecCredential', status: all[Math.min(n, all.length) - 1] }));`,
      '',
    ].join('\n'),
  );
  chmodSync(script, 0o755);
  return {
    runs: () => (existsSync(join(dir, 'count')) ? Number(readFileSync(join(dir, 'count'), 'utf8')) : 0),
  };
}

const execLines = ['exec:', `  apiVersion: ${v1}`, '  command: ./plugin.cjs', '  interactiveMode: Never'];

function client(path: string, opts: KubeClientOptions = {}): KubeClient {
  return new KubeClient(loadKubeconfig(path), opts);
}

describe('authenticating to kube-apiserver', () => {
  it('with a client certificate and key from files named relative to the kubeconfig', async () => {
    const dir = await scratchDir('auth-cert');
    clientCertificate(dir, 'tester', 'skylift-cert-user');
    const c = client(kubeconfigFile(dir, ['client-certificate: tester.crt', 'client-key: tester.key']));
    expect(await whoami(c)).toBe('skylift-cert-user');
  });

  it('with a token file, read again after the apiserver refused the token in it', async () => {
    const dir = await scratchDir('auth-token-file');
    writeFileSync(join(dir, 'token'), 'not-a-valid-token\n');
    const c = client(kubeconfigFile(dir, ['tokenFile: token']));
    const refused = await whoami(c).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(KubeApiError);
    expect((refused as KubeApiError).statusCode).toBe(401);
    writeFileSync(join(dir, 'token'), `${stackInfo().operatorToken}\n`);
    expect(await whoami(c)).toBe(stackInfo().operatorUser);
  });

  it('with an exec plugin token: run once for many requests, and again after a 401', async () => {
    const dir = await scratchDir('auth-exec-token');
    const plugin = execPlugin(dir, [{ token: 'revoked-token' }, { token: stackInfo().operatorToken }]);
    const c = client(kubeconfigFile(dir, execLines));
    await expect(whoami(c)).rejects.toMatchObject({ statusCode: 401 });
    expect(plugin.runs()).toBe(1);
    const names = await Promise.all(Array.from({ length: 10 }, () => whoami(c)));
    expect(new Set(names)).toEqual(new Set([stackInfo().operatorUser]));
    expect(plugin.runs()).toBe(2);
  });

  it('with an exec plugin client certificate: a new one at expiry gets a new connection pool', async () => {
    const dir = await scratchDir('auth-exec-cert');
    const clock = new FakeClock(Date.now());
    const first = clientCertificate(dir, 'first', 'skylift-exec-first');
    const second = clientCertificate(dir, 'second', 'skylift-exec-second');
    const expires = new Date(clock.now() + 10 * 60_000).toISOString();
    const plugin = execPlugin(dir, [
      { clientCertificateData: first.cert, clientKeyData: first.key, expirationTimestamp: expires },
      { clientCertificateData: second.cert, clientKeyData: second.key },
    ]);
    const c = client(kubeconfigFile(dir, execLines), { clock });
    expect(await whoami(c)).toBe('skylift-exec-first');
    expect(await whoami(c)).toBe('skylift-exec-first');
    expect(plugin.runs()).toBe(1);
    clock.advance(9.5 * 60_000); // within a minute of expiry: renewed in the background
    await waitFor(async () => ((await whoami(c)) === 'skylift-exec-second' ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 50,
      description: 'requests with the renewed client certificate',
    });
    expect(plugin.runs()).toBe(2);
  });

  it('a failing exec plugin fails the request with a message naming the user and command', async () => {
    const dir = await scratchDir('auth-exec-fails');
    execPlugin(dir, [{}]);
    await expect(whoami(client(kubeconfigFile(dir, execLines)))).rejects.toThrow(
      /exec credential plugin of user "tester" \(command ".*plugin.cjs"\): printed neither a token nor a client certificate and key/,
    );
  });
});
