// Skylift's kubeconfig reading (src/runtime/kube/kubeconfig.ts, kubeconfigLoad.ts): parsing and
// validation of the current context, kubectl's merge of $KUBECONFIG, relative paths, and the order
// in which an explicit path, $KUBECONFIG, ~/.kube/config and the in-cluster service account apply.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  currentKubeconfig,
  KubeconfigError,
  kubeconfigEntries,
  mergeKubeconfigs,
  type Kubeconfig,
} from '../../src/runtime/kube/kubeconfig.ts';
import { loadKubeconfig, parseKubeconfigText } from '../../src/runtime/kube/kubeconfigLoad.ts';

const root = mkdtempSync(join(tmpdir(), 'skylift-kubeconfig-'));
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});
let dirs = 0;
/** A fresh folder under the test's temporary root. */
function freshDir(): string {
  const dir = join(root, String(++dirs));
  mkdirSync(dir, { recursive: true });
  return dir;
}

const pemBytes = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
const b64 = pemBytes.toString('base64');

/** A kubeconfig document with one context `ctx` on cluster `c` as user `u`, fields added to each. */
function doc(
  cluster: Record<string, unknown> = {},
  user: Record<string, unknown> | null = { token: 't' },
  context: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://k8s.example:6443/', ...cluster } }],
    users: user === null ? [] : [{ name: 'u', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', ...context } }],
    'current-context': 'ctx',
  };
}

const current = (d: unknown, file = '/etc/kube/config'): Kubeconfig =>
  currentKubeconfig(kubeconfigEntries(d, file), file);

describe('the current context of a kubeconfig', () => {
  it('reads the cluster, user and namespace of the current context', () => {
    const kc = current(
      doc(
        { 'certificate-authority-data': b64, 'tls-server-name': 'api.internal' },
        { token: 'abc' },
        {
          namespace: 'team-a',
        },
      ),
    );
    expect(kc).toMatchObject({
      source: '/etc/kube/config',
      context: 'ctx',
      namespace: 'team-a',
      cluster: {
        name: 'c',
        server: 'https://k8s.example:6443',
        insecureSkipTlsVerify: false,
        tlsServerName: 'api.internal',
      },
      user: { name: 'u', token: 'abc', tokenFile: undefined, basic: undefined, exec: undefined },
    });
    expect(kc.cluster.ca).toEqual({ data: pemBytes });
  });

  it.each([
    {
      reason: 'file paths resolve against the folder of the kubeconfig that names them (kubectl)',
      cluster: { 'certificate-authority': 'pki/ca.crt' },
      user: { 'client-certificate': 'pki/u.crt', 'client-key': '/abs/u.key', tokenFile: 'token' },
      want: {
        cluster: { ca: { file: '/etc/kube/pki/ca.crt' } },
        user: {
          clientCertificate: { cert: { file: '/etc/kube/pki/u.crt' }, key: { file: '/abs/u.key' } },
          tokenFile: '/etc/kube/token',
        },
      },
    },
    {
      reason: 'an exec command with a path separator resolves against the folder; a bare name stays for PATH',
      cluster: {},
      user: {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1beta1',
          command: './bin/get-token',
          args: ['--x'],
          env: [{ name: 'A', value: '1' }],
          provideClusterInfo: true,
        },
      },
      want: {
        user: {
          exec: {
            command: '/etc/kube/bin/get-token',
            args: ['--x'],
            env: [{ name: 'A', value: '1' }],
            provideClusterInfo: true,
          },
        },
      },
    },
    {
      reason: 'a bare exec command is looked up on PATH, as kubectl does',
      cluster: {},
      user: {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: 'aws',
          args: ['eks', 'get-token', '--cluster-name', 'prod'],
          env: null,
          interactiveMode: 'IfAvailable',
        },
      },
      want: { user: { exec: { command: 'aws', env: [], provideClusterInfo: false } } },
    },
    {
      reason: 'username and password are basic auth',
      cluster: { 'insecure-skip-tls-verify': true },
      user: { username: 'admin', password: 'secret' },
      want: {
        cluster: { insecureSkipTlsVerify: true, ca: undefined },
        user: { basic: { username: 'admin', password: 'secret' } },
      },
    },
    {
      reason: 'impersonation fields become headers later',
      cluster: {},
      user: { token: 't', as: 'jane', 'as-groups': ['g1', 'g2'], 'as-user-extra': { scopes: ['a'] } },
      want: {
        user: {
          impersonate: { user: 'jane', uid: undefined, groups: ['g1', 'g2'], extra: { scopes: ['a'] } },
        },
      },
    },
  ])('$reason', ({ cluster, user, want }) => {
    expect(current(doc(cluster, user))).toMatchObject(want);
  });

  it('a context without a user is anonymous', () => {
    const d = { ...doc({}, null), contexts: [{ name: 'ctx', context: { cluster: 'c' } }] };
    expect(current(d).user).toMatchObject({ name: '', token: undefined, clientCertificate: undefined });
  });

  it.each([
    {
      reason: 'auth-provider is not supported: the message says to use an exec plugin',
      d: doc({}, { 'auth-provider': { name: 'gcp', config: {} } }),
      message:
        /user "u" authenticates with auth-provider "gcp", which Skylift does not support.*exec credential plugin/,
    },
    {
      reason: 'a proxy is not supported',
      d: doc({ 'proxy-url': 'http://proxy:3128' }),
      message: /cluster "c" sets proxy-url, which Skylift does not support/,
    },
    {
      reason: 'no current-context',
      d: { ...doc(), 'current-context': '' },
      message: /no current-context/,
    },
    {
      reason: 'current-context names no context',
      d: { ...doc(), 'current-context': 'other' },
      message: /current-context "other" is not defined/,
    },
    {
      reason: 'the context names a cluster that is not defined',
      d: doc({}, { token: 't' }, { cluster: 'gone' }),
      message: /context "ctx" names cluster "gone", which is not defined/,
    },
    {
      reason: 'the context names a user that is not defined',
      d: doc({}, { token: 't' }, { user: 'nobody' }),
      message: /names user "nobody", which is not defined/,
    },
    {
      reason: 'a cluster without server',
      d: doc({ server: '' }),
      message: /cluster "c" has no server/,
    },
    {
      reason: 'both a CA file and CA data (kubectl refuses this too)',
      d: doc({ 'certificate-authority': 'ca.crt', 'certificate-authority-data': b64 }),
      message: /sets both certificate-authority and certificate-authority-data/,
    },
    {
      reason: 'skipping TLS verification beside a CA',
      d: doc({ 'certificate-authority-data': b64, 'insecure-skip-tls-verify': true }),
      message: /both insecure-skip-tls-verify and a certificate authority/,
    },
    {
      reason: 'a client certificate without its key',
      d: doc({}, { 'client-certificate-data': b64 }),
      message: /client certificate without its key/,
    },
    {
      reason: 'two ways to authenticate',
      d: doc({}, { token: 't', username: 'a', password: 'b' }),
      message: /more than one way to authenticate \(token, username\/password\)/,
    },
    {
      reason: 'an exec API version Skylift does not speak',
      d: doc({}, { exec: { apiVersion: 'client.authentication.k8s.io/v1alpha1', command: 'x' } }),
      message: /apiVersion "client.authentication.k8s.io\/v1alpha1" is not supported/,
    },
    {
      reason: 'v1 exec plugins must say their interactive mode',
      d: doc({}, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'x' } }),
      message: /interactiveMode is required/,
    },
    {
      reason: 'a plugin that needs a terminal cannot run in the operator',
      d: doc(
        {},
        {
          exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'x', interactiveMode: 'Always' },
        },
      ),
      message: /interactiveMode is Always/,
    },
    {
      reason: 'a field of the wrong type names the field',
      d: doc({}, { token: 42 }),
      message: /user "u": token is not a string/,
    },
    {
      reason: 'a name defined twice in one file',
      d: {
        ...doc(),
        users: [
          { name: 'u', user: {} },
          { name: 'u', user: {} },
        ],
      },
      message: /defines user "u" twice/,
    },
  ])('refuses: $reason', ({ d, message }) => {
    expect(() => current(d)).toThrow(KubeconfigError);
    expect(() => current(d)).toThrow(message);
  });
});

describe('merging kubeconfig files (KUBECONFIG=a:b), as kubectl does', () => {
  const a = kubeconfigEntries(
    {
      clusters: [{ name: 'shared', cluster: { server: 'https://a' } }],
      users: [{ name: 'shared', user: { token: 'from-a' } }],
      contexts: [{ name: 'only-a', context: { cluster: 'shared', user: 'shared' } }],
    },
    '/a/config',
  );
  const b = kubeconfigEntries(
    {
      clusters: [
        { name: 'shared', cluster: { server: 'https://b' } },
        { name: 'only-b', cluster: { server: 'https://only-b', 'certificate-authority': 'ca.crt' } },
      ],
      users: [{ name: 'shared', user: { token: 'from-b' } }],
      contexts: [
        { name: 'only-a', context: { cluster: 'only-b', user: 'shared' } },
        { name: 'only-b', context: { cluster: 'only-b', user: 'shared' } },
      ],
      'current-context': 'only-b',
    },
    '/b/config',
  );

  it('the first file to name an entry wins it whole; current-context comes from the first file that sets one', () => {
    const merged = mergeKubeconfigs([a, b]);
    expect(merged.currentContext).toBe('only-b');
    const kc = currentKubeconfig(merged, '/a/config:/b/config');
    // only-b's cluster comes from b (relative paths against b's folder), its user "shared" from a.
    expect(kc.cluster).toMatchObject({ server: 'https://only-b', ca: { file: '/b/ca.crt' } });
    expect(kc.user.token).toBe('from-a');
    const first = currentKubeconfig({ ...merged, currentContext: 'only-a' }, 'x');
    expect(first.cluster.server).toBe('https://a');
  });

  it('the first file that sets current-context wins it', () => {
    const withCurrent = kubeconfigEntries({ 'current-context': 'only-a' }, '/c/config');
    expect(mergeKubeconfigs([withCurrent, b]).currentContext).toBe('only-a');
    expect(mergeKubeconfigs([b, withCurrent]).currentContext).toBe('only-b');
  });
});

describe('parsing the text', () => {
  it('reads YAML as kubectl writes it, JSON, flow-style YAML, and an empty file', () => {
    const yamlText = [
      'apiVersion: v1',
      'clusters:',
      '- cluster:',
      `    certificate-authority-data: ${b64}`,
      '    server: https://127.0.0.1:6443',
      '  name: kind-kind',
      'contexts:',
      '- context:',
      '    cluster: kind-kind',
      '    user: kind-kind',
      '  name: kind-kind',
      'current-context: kind-kind',
      'kind: Config',
      'preferences: {}',
      'users:',
      '- name: kind-kind',
      '  user:',
      '    exec:',
      '      apiVersion: client.authentication.k8s.io/v1beta1',
      '      args:',
      '      - --region',
      '      - eu-west-1',
      '      command: aws',
      '      env: null',
      '',
    ].join('\n');
    const kc = current(parseKubeconfigText(yamlText, 'f'));
    expect(kc.cluster).toMatchObject({ server: 'https://127.0.0.1:6443', ca: { data: pemBytes } });
    expect(kc.user.exec?.args).toEqual(['--region', 'eu-west-1']);
    expect(parseKubeconfigText(JSON.stringify(doc()), 'f')).toEqual(doc());
    expect(parseKubeconfigText('{ current-context: x }', 'f')).toEqual({ 'current-context': 'x' });
    expect(parseKubeconfigText('\n  \n', 'f')).toBeNull();
    expect(() => parseKubeconfigText('a: [b', '/x/config')).toThrow(
      /kubeconfig \/x\/config is not valid YAML at line 1, column 6: /,
    );
  });
});

describe('a kubeconfig that is not YAML', () => {
  // The kubeconfig's own lines hold tokens, passwords and keys: an error names where, never what.
  const secretLines = [
    'users:',
    '- name: u',
    '  user:',
    '    token: sk-live-0123456789abcdef',
    '    password: hunter2-password',
    '    client-key-data: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t',
  ];
  it.each([
    {
      reason: 'bad indentation',
      text: [...secretLines, '   bad: [x', ''].join('\n'),
      where: 'line 7, column 1',
    },
    {
      reason: 'a flow sequence left open',
      text: [...secretLines, 'clusters: [{name: c', ''].join('\n'),
      where: 'line 8, column 1',
    },
    {
      reason: 'an invalid escape in a quoted secret',
      text: ['users:', '- name: u', '  user:', '    token: "sk-live-0123\\q456789abcdef"', ''].join('\n'),
      where: 'line 4, column',
    },
  ])('loading it names the file and the position, without its text: $reason', ({ text, where }) => {
    const path = join(freshDir(), 'config');
    writeFileSync(path, text);
    const err = ((): unknown => {
      try {
        loadKubeconfig(path, { env: {} });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(KubeconfigError);
    const message = (err as Error).message;
    expect(message).toContain(`kubeconfig ${path} is not valid YAML at ${where}`);
    for (const secret of ['sk-live', '0123', 'hunter2', 'LS0tLS1', 'token:', 'password'])
      expect(message).not.toContain(secret);
    // Nor in what a logger printing the whole error would show.
    expect((err as Error).cause).toBeUndefined();
  });
});

describe('loadKubeconfig: where the kubeconfig comes from', () => {
  /** A folder with kubeconfig files (JSON), a HOME with ~/.kube/config, and a mounted service account. */
  function setup(): {
    dir: string;
    file: (name: string, server: string, extra?: Record<string, unknown>) => string;
    home: string;
    sa: string;
  } {
    const dir = freshDir();
    const file = (name: string, server: string, extra: Record<string, unknown> = {}): string => {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify({ ...doc({ server }), ...extra }));
      return path;
    };
    const home = join(dir, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    const sa = join(dir, 'sa');
    mkdirSync(sa);
    writeFileSync(join(sa, 'token'), 'sa-token\n');
    writeFileSync(join(sa, 'ca.crt'), pemBytes);
    writeFileSync(join(sa, 'namespace'), 'skylift-system\n');
    return { dir, file, home, sa };
  }
  const inClusterEnv = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };

  it('an explicit path wins over KUBECONFIG, ~/.kube/config and the service account', () => {
    const s = setup();
    writeFileSync(join(s.home, '.kube', 'config'), JSON.stringify(doc({ server: 'https://home' })));
    const kc = loadKubeconfig(s.file('explicit', 'https://explicit'), {
      env: { KUBECONFIG: s.file('env', 'https://env'), HOME: s.home, ...inClusterEnv },
      serviceAccountDir: s.sa,
    });
    expect(kc.cluster.server).toBe('https://explicit');
  });

  it('an explicit path that does not exist is an error, not a fallback', () => {
    expect(() => loadKubeconfig('/nonexistent/kubeconfig', { env: {} })).toThrow(
      /read kubeconfig \/nonexistent\/kubeconfig: ENOENT/,
    );
  });

  it('KUBECONFIG lists files merged first-wins; missing ones are skipped; all missing is an error', () => {
    const s = setup();
    const first = s.file('first', 'https://first', { 'current-context': '' });
    const second = s.file('second', 'https://second');
    const kc = loadKubeconfig(undefined, {
      env: { KUBECONFIG: `${join(s.dir, 'missing')}:${first}::${second}`, HOME: s.home },
      serviceAccountDir: s.sa,
    });
    expect(kc.cluster.server).toBe('https://first');
    expect(kc.source).toBe(`${first}:${second}`);
    expect(() =>
      loadKubeconfig(undefined, { env: { KUBECONFIG: join(s.dir, 'missing') }, serviceAccountDir: s.sa }),
    ).toThrow(/none of the files KUBECONFIG lists exists/);
  });

  it('without KUBECONFIG, ~/.kube/config wins over the service account', () => {
    const s = setup();
    writeFileSync(join(s.home, '.kube', 'config'), JSON.stringify(doc({ server: 'https://home' })));
    const kc = loadKubeconfig(undefined, { env: { HOME: s.home, ...inClusterEnv }, serviceAccountDir: s.sa });
    expect(kc.cluster.server).toBe('https://home');
  });

  it('in a cluster: the service host and port, the mounted CA, token file and namespace', () => {
    const s = setup();
    const kc = loadKubeconfig(undefined, { env: { HOME: s.home, ...inClusterEnv }, serviceAccountDir: s.sa });
    expect(kc).toMatchObject({
      source: 'in-cluster',
      namespace: 'skylift-system',
      cluster: {
        server: 'https://10.0.0.1:443',
        ca: { file: join(s.sa, 'ca.crt') },
        insecureSkipTlsVerify: false,
      },
      user: { tokenFile: join(s.sa, 'token'), token: undefined },
    });
    const v6 = loadKubeconfig(undefined, {
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: s.sa,
    });
    expect(v6.cluster.server).toBe('https://[fd00::1]:443');
  });

  it('a mounted token without the service environment, or nothing at all, is a clear error', () => {
    const s = setup();
    expect(() => loadKubeconfig(undefined, { env: {}, serviceAccountDir: s.sa })).toThrow(
      /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both set/,
    );
    expect(() =>
      loadKubeconfig(undefined, { env: { HOME: s.home }, serviceAccountDir: join(s.dir, 'none') }),
    ).toThrow(/no kubeconfig: give --kubeconfig or set KUBECONFIG/);
  });

  it('reads a YAML file with relative paths against its own folder', () => {
    const dir = freshDir();
    const path = join(dir, 'config.yaml');
    writeFileSync(
      path,
      [
        'clusters:',
        '- name: c',
        '  cluster: {server: "https://k8s", certificate-authority: ca.crt}',
        'users:',
        '- name: u',
        '  user: {client-certificate: certs/u.crt, client-key: certs/u.key}',
        'contexts:',
        '- name: ctx',
        '  context: {cluster: c, user: u}',
        'current-context: ctx',
      ].join('\n'),
    );
    const kc = loadKubeconfig(path, { env: {} });
    expect(kc.cluster.ca).toEqual({ file: join(dir, 'ca.crt') });
    expect(kc.user.clientCertificate).toEqual({
      cert: { file: join(dir, 'certs', 'u.crt') },
      key: { file: join(dir, 'certs', 'u.key') },
    });
  });
});
