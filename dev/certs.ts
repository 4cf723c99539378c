import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Files of a throwaway PKI for one local control plane. */
export interface LocalPki {
  readonly caCert: string;
  readonly caKey: string;
  readonly caPem: string;
  readonly serverCert: string;
  readonly serverKey: string;
  /** Service-account token signing key pair (PEM paths). */
  readonly saKey: string;
  readonly saPub: string;
}

/**
 * Generates a CA, a kube-apiserver serving certificate for 127.0.0.1 and
 * localhost signed by it, and a service-account signing key, in `dir`.
 * Uses the system `openssl` (part of Debian's ca-certificates dependencies).
 * Not idempotent: overwrites what is there.
 */
export async function generateLocalPki(dir: string, extraIps: readonly string[] = []): Promise<LocalPki> {
  const p = (name: string): string => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.crt'),
    '-days',
    '30',
    '-subj',
    '/CN=skylift-local-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await run('openssl', [
    'req',
    ...ec,
    '-keyout',
    p('apiserver.key'),
    '-out',
    p('apiserver.csr'),
    '-subj',
    '/CN=kube-apiserver',
  ]);
  await writeFile(
    p('apiserver.ext'),
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      `subjectAltName=IP:127.0.0.1,${[...new Set(extraIps)].map((ip) => `IP:${ip},`).join('')}DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc`,
      '',
    ].join('\n'),
  );
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    p('apiserver.csr'),
    '-CA',
    p('ca.crt'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p('apiserver.crt'),
    '-days',
    '30',
    '-extfile',
    p('apiserver.ext'),
  ]);
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await writeFile(p('sa.key'), sa.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  await writeFile(p('sa.pub'), sa.publicKey.export({ type: 'spki', format: 'pem' }));
  return {
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    caPem: await readFile(p('ca.crt'), 'utf8'),
    serverCert: p('apiserver.crt'),
    serverKey: p('apiserver.key'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
  };
}

/**
 * Issues a client certificate signed by the PKI's CA (`<name>.crt`, `<name>.key`
 * in `dir`) for subject CN=`cn`, O=`org`: kube-apiserver's identity towards
 * kubelets (node mode). Overwrites what is there.
 */
export async function issueClientCert(
  pki: LocalPki,
  dir: string,
  name: string,
  cn: string,
  org: string,
): Promise<{ cert: string; key: string }> {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  const ext = join(dir, `${name}.ext`);
  await run('openssl', [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    key,
    '-out',
    csr,
    '-subj',
    `/O=${org}/CN=${cn}`,
  ]);
  await writeFile(
    ext,
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n',
  );
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    pki.caCert,
    '-CAkey',
    pki.caKey,
    '-CAcreateserial',
    '-out',
    cert,
    '-days',
    '30',
    '-extfile',
    ext,
  ]);
  return { cert, key };
}

/** A bearer-token identity known to the local apiserver through --token-auth-file. */
export interface TokenIdentity {
  readonly user: string;
  readonly uid: string;
  readonly groups: readonly string[];
  readonly token: string;
}

/** Makes an identity with a fresh random token. */
export function newIdentity(user: string, groups: readonly string[]): TokenIdentity {
  return { user, uid: `uid-${user}`, groups, token: randomBytes(24).toString('hex') };
}

/** Renders kube-apiserver's static token file (CSV: token,user,uid,"group1,group2"). Pure. */
export function tokenAuthFile(identities: readonly TokenIdentity[]): string {
  return identities.map((i) => `${i.token},${i.user},${i.uid},"${i.groups.join(',')}"`).join('\n') + '\n';
}
