// What a request to the apiserver authenticates with (src/runtime/kube/credentials.ts,
// execPlugin.ts, connectionPool.ts): token files read again as they rotate, exec credential
// plugins (small shell scripts here, counting their runs) cached until shortly before expiry, and
// the shared connection pool renewed on time or for a new client certificate. Time is a FakeClock.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../dev/wait.ts';
import {
  ConnectionPool,
  idleTimeoutMs,
  kubeDispatcherReuseMs,
  kubeIdleConnectionMs,
  sameCertificate,
} from '../../src/runtime/kube/connectionPool.ts';
import { tokenFileRereadMs, UserCredentials } from '../../src/runtime/kube/credentials.ts';
import { execFailureHoldMs, parseExecCredential, refreshTime } from '../../src/runtime/kube/execPlugin.ts';
import {
  currentKubeconfig,
  KubeCredentialError,
  kubeconfigEntries,
  type Kubeconfig,
} from '../../src/runtime/kube/kubeconfig.ts';
import { FakeClock } from '../support/fakeClock.ts';

const root = mkdtempSync(join(tmpdir(), 'skylift-credentials-'));
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});
let dirs = 0;
function freshDir(): string {
  const dir = join(root, String(++dirs));
  mkdirSync(dir, { recursive: true });
  return dir;
}

const v1 = 'client.authentication.k8s.io/v1';

/** A kubeconfig whose current user has `user`'s fields, read from `<dir>/config`. */
function kubeconfig(
  user: Record<string, unknown>,
  dir = '/kube',
  cluster: Record<string, unknown> = {},
): Kubeconfig {
  const file = join(dir, 'config');
  return currentKubeconfig(
    kubeconfigEntries(
      {
        clusters: [{ name: 'c', cluster: { server: 'https://k8s.example', ...cluster } }],
        users: [{ name: 'robot', user }],
        contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'robot' } }],
        'current-context': 'ctx',
      },
      file,
    ),
    file,
  );
}

/** Resolves once `probe` answers true (the project's waitFor); fails after 5 s. */
async function until(probe: () => boolean | Promise<boolean>, what: string): Promise<void> {
  await waitFor(async () => ((await probe()) ? true : undefined), {
    timeoutMs: 5_000,
    intervalMs: 10,
    description: what,
  });
}

const authorization = (headers: readonly [string, string][]): string | undefined =>
  headers.find(([k]) => k === 'authorization')?.[1];

describe('static credentials', () => {
  it('a token, basic auth and impersonation become headers', async () => {
    const clock = new FakeClock();
    const token = await new UserCredentials(
      kubeconfig({ token: 'abc', as: 'jane', 'as-groups': ['a', 'b'] }),
      {
        clock,
      },
    ).forRequest();
    expect(token.headers).toEqual([
      ['authorization', 'Bearer abc'],
      ['impersonate-user', 'jane'],
      ['impersonate-group', 'a'],
      ['impersonate-group', 'b'],
    ]);
    const basic = await new UserCredentials(kubeconfig({ username: 'admin', password: 'pw' }), {
      clock,
    }).forRequest();
    expect(basic.headers).toEqual([['authorization', `Basic ${Buffer.from('admin:pw').toString('base64')}`]]);
    expect(basic.clientCertificate).toBeUndefined();
  });

  it('a client certificate from the kubeconfig goes to the connection, not the headers', async () => {
    const pem = Buffer.from('pem').toString('base64');
    const auth = await new UserCredentials(
      kubeconfig({ 'client-certificate-data': pem, 'client-key-data': pem }),
      { clock: new FakeClock() },
    ).forRequest();
    expect(auth.headers).toEqual([]);
    expect(auth.clientCertificate).toEqual({
      cert: { data: Buffer.from('pem') },
      key: { data: Buffer.from('pem') },
    });
  });
});

describe('a token file', () => {
  it('is read again once a minute old, keeps the last good token while unreadable (trying again each time), and again after a 401', async () => {
    const dir = freshDir();
    const path = join(dir, 'token');
    writeFileSync(path, 'first\n');
    const clock = new FakeClock();
    const creds = new UserCredentials(kubeconfig({ tokenFile: 'token' }, dir), { clock });
    const bearer = async (): Promise<string | undefined> => authorization((await creds.forRequest()).headers);
    expect(await bearer()).toBe('Bearer first');
    writeFileSync(path, 'rotated');
    clock.advance(tokenFileRereadMs - 1);
    expect(await bearer()).toBe('Bearer first');
    clock.advance(1);
    expect(await bearer()).toBe('Bearer rotated');
    rmSync(path);
    clock.advance(tokenFileRereadMs);
    expect(await bearer()).toBe('Bearer rotated');
    writeFileSync(path, 'back');
    expect(await bearer()).toBe('Bearer back');
    writeFileSync(path, 'after-401');
    const refused = await creds.forRequest();
    expect(authorization(refused.headers)).toBe('Bearer back');
    creds.rejected(refused);
    expect(await bearer()).toBe('Bearer after-401');
  });

  it('a late 401 of a request sent with the token read before does not read the file again', async () => {
    const dir = freshDir();
    const path = join(dir, 'token');
    writeFileSync(path, 'first');
    const clock = new FakeClock();
    const creds = new UserCredentials(kubeconfig({ tokenFile: 'token' }, dir), { clock });
    const bearer = async (): Promise<string | undefined> => authorization((await creds.forRequest()).headers);
    const old = await creds.forRequest();
    writeFileSync(path, 'second');
    creds.rejected(old);
    expect(await bearer()).toBe('Bearer second');
    writeFileSync(path, 'third');
    creds.rejected(old); // answers a request sent with "first"
    expect(await bearer()).toBe('Bearer second');
  });

  it('that was never readable fails the request, naming the user and the file', async () => {
    const creds = new UserCredentials(kubeconfig({ tokenFile: '/nonexistent/token' }), {
      clock: new FakeClock(),
    });
    await expect(creds.forRequest()).rejects.toThrow(KubeCredentialError);
    await expect(creds.forRequest()).rejects.toThrow(
      /read the token file \/nonexistent\/token of user "robot": ENOENT/,
    );
  });
});

/**
 * A plugin script in a fresh folder: each run adds one to `count`, records its arguments and
 * KUBERNETES_EXEC_INFO, and prints what `body` (shell) prints; `$N` is the run's number.
 */
function plugin(body: string): {
  dir: string;
  command: string;
  runs: () => number;
  file: (name: string) => string;
} {
  const dir = freshDir();
  const command = join(dir, 'plugin.sh');
  writeFileSync(
    command,
    [
      '#!/bin/sh',
      'D=$(dirname "$0")',
      'N=$(( $(cat "$D/count" 2>/dev/null || echo 0) + 1 ))',
      'echo "$N" > "$D/count"',
      'printf "%s" "$KUBERNETES_EXEC_INFO" > "$D/info.json"',
      'printf "%s\\n" "$@" > "$D/args"',
      body,
      '',
    ].join('\n'),
  );
  chmodSync(command, 0o755);
  const file = (name: string): string => join(dir, name);
  return {
    dir,
    command,
    file,
    runs: () => (existsSync(file('count')) ? Number(readFileSync(file('count'), 'utf8')) : 0),
  };
}

/** A plugin printing a v1 ExecCredential with token tok-<run>, expiring at $EXP. */
const tokenPlugin = (): ReturnType<typeof plugin> =>
  plugin(
    `printf '{"apiVersion":"${v1}","kind":"ExecCredential","status":{"token":"tok-%s","expirationTimestamp":"%s"}}' "$N" "$EXP"`,
  );

function execUser(command: string, env: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  return {
    exec: {
      apiVersion: v1,
      command,
      args: ['get-token', '--cluster', 'prod'],
      env: Object.entries(env).map(([name, value]) => ({ name, value })),
      interactiveMode: 'IfAvailable',
      ...extra,
    },
  };
}

describe('an exec credential plugin', () => {
  it('runs once for concurrent requests, is cached until a minute before expiry, then runs again', async () => {
    const clock = new FakeClock();
    const expires = clock.now() + 15 * 60_000;
    const p = tokenPlugin();
    const creds = new UserCredentials(
      kubeconfig(execUser(p.command, { EXP: new Date(expires).toISOString() })),
      { clock },
    );
    const bearer = async (): Promise<string | undefined> => authorization((await creds.forRequest()).headers);
    const first = await Promise.all([1, 2, 3, 4, 5].map(() => bearer()));
    expect(first).toEqual(Array(5).fill('Bearer tok-1'));
    expect(p.runs()).toBe(1);
    expect(readFileSync(p.file('args'), 'utf8')).toBe('get-token\n--cluster\nprod\n');
    expect(JSON.parse(readFileSync(p.file('info.json'), 'utf8'))).toEqual({
      apiVersion: v1,
      kind: 'ExecCredential',
      spec: { interactive: false },
    });
    clock.advance(13 * 60_000);
    expect(await bearer()).toBe('Bearer tok-1');
    expect(p.runs()).toBe(1);
    clock.advance(60_000); // 1 min before expiry: still valid, renewed in the background
    expect(await bearer()).toBe('Bearer tok-1');
    await until(async () => (await bearer()) === 'Bearer tok-2', 'the renewed credential');
    expect(p.runs()).toBe(2);
  });

  /**
   * A plugin whose first run prints tok-1 expiring at $EXP; each later run waits until the test
   * creates `go` in its folder (the test holds it), then prints tok-<run> without expiry.
   */
  const heldPlugin = (): ReturnType<typeof plugin> =>
    plugin(
      [
        'if [ "$N" -gt 1 ]; then',
        // (It gives up once the test's folder is gone: a failed test leaves no plugin behind.)
        '  while [ ! -e "$D/go" ] && [ -d "$D" ]; do sleep 0.02; done',
        `  printf '{"apiVersion":"${v1}","kind":"ExecCredential","status":{"token":"tok-%s"}}' "$N"`,
        'else',
        `  printf '{"apiVersion":"${v1}","kind":"ExecCredential","status":{"token":"tok-%s","expirationTimestamp":"%s"}}' "$N" "$EXP"`,
        'fi',
      ].join('\n'),
    );

  it('past its refresh time, answers the unexpired credential at once while one run refreshes it in the background', async () => {
    const clock = new FakeClock();
    const expires = clock.now() + 15 * 60_000;
    const p = heldPlugin();
    const creds = new UserCredentials(
      kubeconfig(execUser(p.command, { EXP: new Date(expires).toISOString() })),
      { clock },
    );
    const bearer = async (): Promise<string | undefined> => authorization((await creds.forRequest()).headers);
    expect(await bearer()).toBe('Bearer tok-1');
    clock.advance(14 * 60_000); // the refresh time: a minute before expiry
    // The refresh is held: these answer only if they do not wait for it.
    expect(await Promise.all([1, 2, 3, 4, 5].map(() => bearer()))).toEqual(Array(5).fill('Bearer tok-1'));
    await until(() => p.runs() === 2, 'the background refresh to start');
    expect(await bearer()).toBe('Bearer tok-1');
    writeFileSync(p.file('go'), '');
    await until(async () => (await bearer()) === 'Bearer tok-2', 'the refreshed credential');
    expect(p.runs()).toBe(2);
  });

  it('with an expired credential, waits for the refresh', async () => {
    const clock = new FakeClock();
    const expires = clock.now() + 15 * 60_000;
    const p = heldPlugin();
    const creds = new UserCredentials(
      kubeconfig(execUser(p.command, { EXP: new Date(expires).toISOString() })),
      { clock },
    );
    const bearer = async (): Promise<string | undefined> => authorization((await creds.forRequest()).headers);
    expect(await bearer()).toBe('Bearer tok-1');
    clock.advance(15 * 60_000);
    let settled = false;
    const pending = bearer().finally(() => {
      settled = true;
    });
    await until(() => p.runs() === 2, 'the refresh to start');
    expect(settled).toBe(false);
    writeFileSync(p.file('go'), '');
    expect(await pending).toBe('Bearer tok-2');
  });

  it('hands the cluster to a plugin that asks for it, and takes a client certificate from it', async () => {
    const clock = new FakeClock();
    const ca = Buffer.from('ca-pem');
    const p = plugin(
      `printf '{"apiVersion":"${v1}","kind":"ExecCredential","status":{"clientCertificateData":"CERT","clientKeyData":"KEY"}}'`,
    );
    const kc = kubeconfig(execUser(p.command, {}, { provideClusterInfo: true }), '/kube', {
      'certificate-authority-data': ca.toString('base64'),
      'tls-server-name': 'api',
      extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { audience: 'x' } }],
    });
    const creds = new UserCredentials(kc, { clock });
    const auth = await creds.forRequest();
    expect(auth.headers).toEqual([]);
    expect(auth.clientCertificate).toEqual({
      cert: { data: Buffer.from('CERT') },
      key: { data: Buffer.from('KEY') },
    });
    expect(JSON.parse(readFileSync(p.file('info.json'), 'utf8'))).toEqual({
      apiVersion: v1,
      kind: 'ExecCredential',
      spec: {
        interactive: false,
        cluster: {
          server: 'https://k8s.example',
          'tls-server-name': 'api',
          'certificate-authority-data': ca.toString('base64'),
          config: { audience: 'x' },
        },
      },
    });
    // No expiry: kept until the apiserver refuses it.
    clock.advance(24 * 3600_000);
    creds.rejected(await creds.forRequest());
    await creds.forRequest();
    expect(p.runs()).toBe(2);
  });

  it('a late 401 of a request sent with a credential since replaced does not run the plugin again', async () => {
    const clock = new FakeClock();
    const p = plugin(
      `printf '{"apiVersion":"${v1}","kind":"ExecCredential","status":{"token":"tok-%s"}}' "$N"`,
    );
    const creds = new UserCredentials(kubeconfig(execUser(p.command)), { clock });
    const bearer = async (): Promise<string | undefined> => authorization((await creds.forRequest()).headers);
    // Three requests sent with tok-1, all refused: the first 401 renews it, the late ones do not.
    const [first, second, third] = await Promise.all([1, 2, 3].map(() => creds.forRequest()));
    if (first === undefined || second === undefined || third === undefined) throw new Error('three auths');
    expect([first, second, third].map((a) => authorization(a.headers))).toEqual(
      Array(3).fill('Bearer tok-1'),
    );
    creds.rejected(first);
    expect(await bearer()).toBe('Bearer tok-2');
    creds.rejected(second);
    creds.rejected(third);
    expect(await bearer()).toBe('Bearer tok-2');
    expect(p.runs()).toBe(2);
    // A 401 of the current one still renews it.
    creds.rejected(await creds.forRequest());
    expect(await bearer()).toBe('Bearer tok-3');
  });

  it('a late 401 of the credential a background refresh replaced does not run the plugin again', async () => {
    const clock = new FakeClock();
    const expires = clock.now() + 15 * 60_000;
    const p = tokenPlugin();
    const creds = new UserCredentials(
      kubeconfig(execUser(p.command, { EXP: new Date(expires + 15 * 60_000).toISOString() })),
      { clock },
    );
    const bearer = async (): Promise<string | undefined> => authorization((await creds.forRequest()).headers);
    const old = await creds.forRequest();
    clock.advance(29 * 60_000);
    await until(async () => (await bearer()) === 'Bearer tok-2', 'the renewed credential');
    creds.rejected(old);
    expect(await bearer()).toBe('Bearer tok-2');
    expect(p.runs()).toBe(2);
  });

  it('that fails says which user and command and why; the error answers for a while without running it again', async () => {
    const clock = new FakeClock();
    const p = plugin('echo "token expired: run aws sso login" >&2\nexit 3');
    const creds = new UserCredentials(kubeconfig(execUser(p.command)), { clock });
    const message = `exec credential plugin of user "robot" (command ${JSON.stringify(p.command)}) exited with code 3: token expired: run aws sso login`;
    await expect(creds.forRequest()).rejects.toThrow(message);
    await expect(creds.forRequest()).rejects.toThrow(KubeCredentialError);
    expect(p.runs()).toBe(1);
    clock.advance(execFailureHoldMs);
    await expect(creds.forRequest()).rejects.toThrow(message);
    expect(p.runs()).toBe(2);
  });

  it('whose refresh fails keeps answering with the credential it has while that has not expired', async () => {
    const clock = new FakeClock();
    const expires = clock.now() + 10 * 60_000;
    const p = plugin(
      `[ "$N" -gt 1 ] && { echo down >&2; exit 1; }\nprintf '{"apiVersion":"${v1}","kind":"ExecCredential","status":{"token":"tok-%s","expirationTimestamp":"%s"}}' "$N" "$EXP"`,
    );
    const creds = new UserCredentials(
      kubeconfig(execUser(p.command, { EXP: new Date(expires).toISOString() })),
      { clock },
    );
    const bearer = async (): Promise<string | undefined> => authorization((await creds.forRequest()).headers);
    expect(await bearer()).toBe('Bearer tok-1');
    clock.advance(9.5 * 60_000);
    expect(await bearer()).toBe('Bearer tok-1');
    await until(() => p.runs() === 2, 'the background refresh');
    expect(await bearer()).toBe('Bearer tok-1');
    clock.advance(30_000); // expired now
    await expect(bearer()).rejects.toThrow(/exited with code 1: down/);
  });

  it('that is not installed says so with its install hint', async () => {
    const creds = new UserCredentials(
      kubeconfig(
        execUser('/nonexistent/aws-iam-authenticator', {}, { installHint: 'Install it: brew install x' }),
      ),
      { clock: new FakeClock() },
    );
    await expect(creds.forRequest()).rejects.toThrow(
      'exec credential plugin of user "robot" (command "/nonexistent/aws-iam-authenticator") failed: the command was not found. Install it: brew install x',
    );
  });

  it('that does not finish within its deadline is killed', async () => {
    const p = plugin('exec sleep 30');
    const creds = new UserCredentials(kubeconfig(execUser(p.command)), {
      clock: new FakeClock(),
      execTimeoutMs: 200,
    });
    await expect(creds.forRequest()).rejects.toThrow(/command .*plugin.sh"\) did not finish within 0.2 s/);
  });

  it('that does not finish within its deadline is killed with the processes it started', async () => {
    // A wrapper script whose child would keep the output pipes open (and itself alive) for 5 min.
    const p = plugin('sleep 300 &\necho "$$ $!" > "$D/pids.tmp" && mv "$D/pids.tmp" "$D/pids"\nwait');
    const creds = new UserCredentials(kubeconfig(execUser(p.command)), {
      clock: new FakeClock(),
      execTimeoutMs: 1_000,
    });
    const failed = creds.forRequest().catch((e: unknown) => e);
    await until(() => existsSync(p.file('pids')), 'the plugin to start its child');
    const [script, child] = readFileSync(p.file('pids'), 'utf8').trim().split(' ').map(Number);
    if (script === undefined || child === undefined) throw new Error('two process ids');
    // Field 5 of /proc/<pid>/stat: the child's process group.
    const group = Number(readFileSync(`/proc/${child}/stat`, 'utf8').split(') ')[1]?.split(' ')[2]);
    const gone = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return false;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === 'ESRCH';
      }
    };
    try {
      const err = await failed;
      expect(err).toBeInstanceOf(KubeCredentialError);
      expect((err as Error).message).toMatch(/did not finish within 1 s$/);
      await until(() => gone(-group) && gone(child), 'no process of the plugin group to remain');
      expect(group).toBe(script); // the plugin led a group of its own
    } finally {
      if (!gone(child)) process.kill(child, 'SIGKILL');
    }
  });

  it('that prints something else is refused, saying what was wrong', async () => {
    const p = plugin(
      `printf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}'`,
    );
    const creds = new UserCredentials(kubeconfig(execUser(p.command)), { clock: new FakeClock() });
    await expect(creds.forRequest()).rejects.toThrow(
      /printed apiVersion "client.authentication.k8s.io\/v1beta1", but the kubeconfig asks for client.authentication.k8s.io\/v1/,
    );
  });
});

describe('an exec credential plugin error says what went wrong without quoting a credential', () => {
  it('stdout that is not JSON is not quoted', async () => {
    // A bare token, as `aws eks get-token --output text` might print one.
    const p = plugin(`printf 'k8s-aws-v1.aHR0cHM6Ly9zdHMuYW1hem9uYXdzLmNvbS8'`);
    const creds = new UserCredentials(kubeconfig(execUser(p.command)), { clock: new FakeClock() });
    const err = await creds.forRequest().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeCredentialError);
    const message = (err as Error).message;
    expect(message).not.toContain('k8s-aws');
    expect(String((err as Error).cause)).not.toContain('k8s-aws');
    expect(message).toMatch(/plugin.sh"\): did not print an ExecCredential: its output is not JSON$/);
  });

  it('of a failed run, the end of stderr is shown, at most 500 characters, tokens masked', async () => {
    const p = plugin(
      [
        `i=0; while [ $i -lt 200 ]; do echo "progress line $i" >&2; i=$((i+1)); done`,
        `echo 'request failed: Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.payload.sig' >&2`,
        `echo 'cached: {"kind":"ExecCredential","status":{"token":"k8s-aws-v1.secretvalue","expirationTimestamp":"x"}}' >&2`,
        `echo 'last: access_token="k8s-aws-v1.other"' >&2`,
        'exit 2',
      ].join('\n'),
    );
    const creds = new UserCredentials(kubeconfig(execUser(p.command)), { clock: new FakeClock() });
    const message = await creds.forRequest().then(
      () => '',
      (e: unknown) => (e as Error).message,
    );
    const prefix = `exec credential plugin of user "robot" (command ${JSON.stringify(p.command)}) exited with code 2: `;
    expect(message.startsWith(prefix)).toBe(true);
    const tail = message.slice(prefix.length);
    expect(tail.length).toBeLessThanOrEqual(501); // an ellipsis and 500 characters
    expect(tail).toMatch(/^….*progress line 199 \| request failed: Authorization: Bearer \*\*\* \| cached: /);
    expect(tail).toContain('"token":"***"');
    expect(tail).toContain('"expirationTimestamp":"x"');
    expect(tail).toContain('access_token="***"');
    for (const secret of ['eyJhbGci', 'payload.sig', 'secretvalue', 'k8s-aws-v1.other'])
      expect(tail).not.toContain(secret);
  });
});

describe('reading an ExecCredential', () => {
  const cred = (status: unknown): string =>
    JSON.stringify({ apiVersion: v1, kind: 'ExecCredential', status });
  it.each([
    {
      reason: 'not JSON',
      out: 'Token: abc',
      error: /^did not print an ExecCredential: its output is not JSON$/,
    },
    {
      reason: 'another kind',
      out: JSON.stringify({ apiVersion: v1, kind: 'Status' }),
      error: /printed kind "Status"/,
    },
    {
      reason: 'no status',
      out: JSON.stringify({ apiVersion: v1, kind: 'ExecCredential' }),
      error: /without status/,
    },
    { reason: 'nothing in status', out: cred({}), error: /neither a token nor a client certificate/ },
    {
      reason: 'a certificate without key',
      out: cred({ clientCertificateData: 'c' }),
      error: /without the other/,
    },
    { reason: 'a bad expiry', out: cred({ token: 't', expirationTimestamp: 'soon' }), error: /not a time/ },
  ])('refuses $reason', ({ out, error }) => {
    expect(() => parseExecCredential(out, v1)).toThrow(error);
  });

  it('reads the token, certificate and expiry', () => {
    expect(
      parseExecCredential(cred({ token: 't', expirationTimestamp: '2026-01-01T00:00:00Z' }), v1),
    ).toEqual({ token: 't', clientCertificate: undefined, expiresAt: Date.UTC(2026, 0, 1) });
  });

  it.each([
    { reason: 'a 15-minute token renews a minute early', obtained: 0, expires: 900_000, want: 840_000 },
    { reason: 'a short-lived one at half its life', obtained: 0, expires: 60_000, want: 30_000 },
    { reason: 'one without expiry never', obtained: 0, expires: undefined, want: Infinity },
  ])('renewal time: $reason', ({ obtained, expires, want }) => {
    expect(refreshTime(obtained, expires)).toBe(want);
  });
});

describe('the shared connection pool', () => {
  const cluster = kubeconfig({ token: 't' }).cluster;
  const data = (s: string) => ({ data: Buffer.from(s) });

  it('is the same pool until it is kubeDispatcherReuseMs old or the client certificate changes', () => {
    const clock = new FakeClock();
    const pool = new ConnectionPool(cluster, 'robot', clock);
    const certA = { cert: data('a'), key: data('k') };
    const first = pool.agent(certA);
    expect(pool.agent({ cert: data('a'), key: data('k') })).toBe(first);
    clock.advance(kubeDispatcherReuseMs - 1);
    expect(pool.agent(certA)).toBe(first);
    const rotated = pool.agent({ cert: data('b'), key: data('k') });
    expect(rotated).not.toBe(first);
    clock.advance(kubeDispatcherReuseMs);
    expect(pool.agent({ cert: data('b'), key: data('k') })).not.toBe(rotated);
  });

  it.each([
    { reason: 'nothing said: 30 s', node: undefined, announced: undefined, want: kubeIdleConnectionMs },
    { reason: 'a server announcing 5 s: 4 s', node: 0, announced: 5_000, want: 4_000 },
    { reason: 'one announcing 2 min: still 30 s', node: 0, announced: 120_000, want: kubeIdleConnectionMs },
    { reason: "a shorter timeout Node's Agent set", node: 10_000, announced: undefined, want: 10_000 },
    { reason: 'one announcing 1 s: not kept', node: 0, announced: 1_000, want: 0 },
  ])('an idle connection is kept for: $reason', ({ node, announced, want }) => {
    expect(idleTimeoutMs(node, announced)).toBe(want);
  });

  it('a CA file it cannot read fails the request, naming the file and cluster', () => {
    const withCa = kubeconfig({ token: 't' }, '/kube', {
      'certificate-authority': '/nonexistent/ca.crt',
    }).cluster;
    expect(() => new ConnectionPool(withCa, 'robot', new FakeClock()).agent(undefined)).toThrow(
      /read certificate-authority \/nonexistent\/ca.crt of cluster "c": ENOENT/,
    );
  });

  it.each([
    { reason: 'the same files', a: { file: '/c' }, b: { file: '/c' }, same: true },
    { reason: 'other files', a: { file: '/c' }, b: { file: '/d' }, same: false },
    { reason: 'equal bytes', a: data('x'), b: data('x'), same: true },
    { reason: 'a file and bytes', a: { file: '/c' }, b: data('x'), same: false },
  ])('certificates compare by $reason', ({ a, b, same }) => {
    expect(sameCertificate({ cert: a, key: a }, { cert: b, key: b })).toBe(same);
    expect(sameCertificate(undefined, { cert: b, key: b })).toBe(false);
  });
});
