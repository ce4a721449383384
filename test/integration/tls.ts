/** Test PKI made with openssl: a CA, a server certificate for 127.0.0.1/localhost, a PKCS#12 keystore. */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestPki {
  dir: string;
  /** PEM of the CA that signed the server certificate. */
  caFile: string;
  /** PEM of an unrelated CA (for "wrong CA" tests). */
  otherCaFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  /** PKCS#12 keystore (server key + chain) for Kafka, password `keystorePassword`. */
  keystoreFile: string;
  keystorePassword: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

export function makeTestPki(dir: string): TestPki {
  makeCa(dir, 'test-ca');
  makeCa(dir, 'other-ca');
  openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=localhost',
  ]);
  writeFileSync(
    join(dir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n',
  );
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'test-ca.pem',
    '-CAkey',
    'test-ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-out',
    'server.pem',
    '-extfile',
    'server.ext',
  ]);
  const keystorePassword = 'keystore-pw';
  openssl(dir, [
    'pkcs12',
    '-export',
    '-in',
    'server.pem',
    '-inkey',
    'server.key',
    '-certfile',
    'test-ca.pem',
    '-name',
    'broker',
    '-out',
    'server.p12',
    '-passout',
    `pass:${keystorePassword}`,
  ]);
  return {
    dir,
    caFile: join(dir, 'test-ca.pem'),
    otherCaFile: join(dir, 'other-ca.pem'),
    serverCertFile: join(dir, 'server.pem'),
    serverKeyFile: join(dir, 'server.key'),
    keystoreFile: join(dir, 'server.p12'),
    keystorePassword,
  };
}
