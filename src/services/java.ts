import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { serviceSettings } from '../config/config';

export interface JavaRuntime {
  /** Absolute path of the `java` executable. */
  java: string;
  home: string;
  major: number;
}

/** Where Debian and the Temurin packages put JDKs; the machine image has 17 (default) and 25. */
const JVM_DIR = '/usr/lib/jvm';

/**
 * Finds a Java runtime of at least `minMajor`, preferring (in order) `CG_JAVA_HOME`, `JAVA_HOME`,
 * the `java` on PATH, then the newest JDK under /usr/lib/jvm. Versions are read from each
 * JDK's `release` file, so no JVM is started just to ask its version.
 *
 * Kafka 4.x brokers need 17+; Apicurio Registry 3.3 is compiled for 21 (class file 65), which
 * the default Java 17 here refuses with UnsupportedClassVersionError.
 */
export function findJava(minMajor: number, env: NodeJS.ProcessEnv = process.env): JavaRuntime {
  const candidates: string[] = [];
  for (const home of [serviceSettings(env).javaHome, env.JAVA_HOME])
    if (home) candidates.push(home);
  const onPath = javaOnPath(env.PATH ?? '');
  if (onPath !== undefined) candidates.push(resolve(realpathSync(onPath), '..', '..'));
  if (existsSync(JVM_DIR)) {
    const homes = readdirSync(JVM_DIR).map((name) => join(JVM_DIR, name));
    candidates.push(...homes.sort((a, b) => (majorOf(b) ?? 0) - (majorOf(a) ?? 0)));
  }
  const seen: string[] = [];
  for (const home of candidates) {
    const major = majorOf(home);
    const java = join(home, 'bin', 'java');
    seen.push(`${home} (${major ?? '?'})`);
    if (major !== undefined && major >= minMajor && existsSync(java)) return { java, home, major };
  }
  throw new Error(
    `no Java ${minMajor}+ found (set CG_JAVA_HOME); looked at: ${seen.join(', ') || 'nothing'}`,
  );
}

function javaOnPath(path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    const candidate = join(dir, 'java');
    if (dir !== '' && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Major version from `<home>/release` (JAVA_VERSION="25.0.3" or "1.8.0_..."). */
function majorOf(home: string): number | undefined {
  const release = join(home, 'release');
  if (!existsSync(release)) return undefined;
  const match = /^JAVA_VERSION="(\d+)(?:\.(\d+))?/m.exec(readFileSync(release, 'utf8'));
  if (match === null) return undefined;
  const first = Number(match[1]);
  return first === 1 && match[2] !== undefined ? Number(match[2]) : first;
}
