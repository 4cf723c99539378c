// Certificates and keys for the tests of TLS Secrets imported into ACM, made with openssl (node:crypto
// cannot issue certificates): self-signed, or issued by a CA made the same way.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TlsSecret } from '../../src/providers/acm/tlsSecret.ts';

/** A certificate and its key, PEM. */
export interface CertAndKey {
  readonly cert: string;
  readonly key: string;
}

/** The key types the fixtures make. */
export type FixtureKey = 'rsa:2048' | 'rsa:1024' | 'rsa:3072' | 'ec:prime256v1' | 'ec:secp384r1' | 'ed25519';

function keyArgs(k: FixtureKey): string[] {
  if (k.startsWith('rsa:')) return ['-newkey', k];
  if (k === 'ed25519') return ['-newkey', 'ed25519'];
  return ['-newkey', 'ec', '-pkeyopt', `ec_paramgen_curve:${k.slice(3)}`];
}

/**
 * A certificate for `cn` (and `sans`; CN and SANs by default both `cn`), valid for `days` days from
 * now, with a new key of type `key` (default RSA 2048): self-signed, or issued by `ca`.
 */
export function makeCertificate(o: {
  cn: string;
  sans?: readonly string[];
  days?: number;
  key?: FixtureKey;
  ca?: CertAndKey;
  isCa?: boolean;
}): CertAndKey {
  const dir = mkdtempSync(join(tmpdir(), 'skylift-tls-'));
  try {
    const names = o.sans ?? [o.cn];
    const san =
      names.length > 0 ? ['-addext', `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`] : [];
    const ca = o.isCa === true ? ['-addext', 'basicConstraints=critical,CA:TRUE'] : [];
    const days = String(o.days ?? 30);
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    const common = [...keyArgs(o.key ?? 'rsa:2048'), '-nodes', '-keyout', keyFile, '-subj', `/CN=${o.cn}`];
    if (o.ca === undefined) {
      execFileSync('openssl', ['req', '-x509', ...common, '-out', certFile, '-days', days, ...san, ...ca], {
        stdio: 'ignore',
      });
    } else {
      const csr = join(dir, 'req.csr');
      writeFileSync(join(dir, 'ca.pem'), o.ca.cert);
      writeFileSync(join(dir, 'ca.key'), o.ca.key);
      writeFileSync(
        join(dir, 'ext.cnf'),
        names.length > 0 ? `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\n` : '',
      );
      execFileSync('openssl', ['req', '-new', ...common, '-out', csr], { stdio: 'ignore' });
      execFileSync(
        'openssl',
        [
          'x509',
          '-req',
          '-in',
          csr,
          '-CA',
          join(dir, 'ca.pem'),
          '-CAkey',
          join(dir, 'ca.key'),
          '-CAcreateserial',
          '-out',
          certFile,
          '-days',
          days,
          '-extfile',
          join(dir, 'ext.cnf'),
        ],
        { stdio: 'ignore' },
      );
    }
    return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `key` encrypted with a passphrase (PKCS#8), PEM. */
export function encryptedKey(key: string): string {
  return execFileSync('openssl', ['pkcs8', '-topk8', '-v2', 'aes-256-cbc', '-passout', 'pass:secret'], {
    input: key,
  }).toString('utf8');
}

/** A TLS Secret of `namespace/name` holding `tls.crt` and `tls.key`. */
export function tlsSecret(
  namespace: string,
  name: string,
  c: { cert: string | undefined; key: string | undefined },
  o: { uid?: string; type?: string } = {},
): TlsSecret {
  return {
    namespace,
    name,
    uid: o.uid ?? `uid-${namespace}-${name}`,
    type: o.type ?? 'kubernetes.io/tls',
    certificate: c.cert,
    privateKey: c.key,
  };
}
