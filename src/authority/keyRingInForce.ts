/**
 * The processor's authority setting (contract §4b) over its life: the trusted key ring read from
 * CG_TRUSTED_KEYS_FILE at start and again on every reload (SIGHUP), or no ring at all, which only
 * CG_ALLOW_UNSIGNED=true permits. A reload that fails keeps the ring in force: a broken edit
 * must neither stop the processor nor drop to "no ring" (which would accept everything unsigned).
 */
import type { Logger } from 'pino';
import type { TrustedKeyRing } from '../engine/authority';
import { ConfigError } from '../config/settings';
import { loadKeyRing } from './ring';

/** What the metrics are told (src/metrics/metrics.ts). */
export interface KeyRingObserver {
  /** The keys in force, or null when running unsigned under CG_ALLOW_UNSIGNED. */
  keyRing?(keys: number | null): void;
  keyRingReload?(outcome: 'loaded' | 'failed'): void;
}

export interface AuthoritySettings {
  trustedKeysFile: string | null;
  allowUnsigned: boolean;
}

/** Refused before anything else starts: no ring and no explicit permission to run without one. */
export function requireAuthority(c: AuthoritySettings): void {
  if (c.trustedKeysFile === null && !c.allowUnsigned)
    throw new ConfigError(
      'CG_TRUSTED_KEYS_FILE (--trusted-keys-file) is not set: without a trusted key ring anyone who can write the input ' +
        'topic can write off a loss or fake a spill. Make one with `compaction-guard keys new --ring RING.json`, ' +
        'or set CG_ALLOW_UNSIGNED=true to accept unsigned events',
    );
}

/** The keys of a ring as logged: keyId, name and roles, never the public key bytes. */
export function describeRing(ring: TrustedKeyRing) {
  return [...ring.values()].map((k) => ({ keyId: k.keyId, name: k.name, roles: k.roles }));
}

export class KeyRingInForce {
  private ring: TrustedKeyRing | null;
  private observer: KeyRingObserver = {};

  private constructor(
    readonly file: string | null,
    ring: TrustedKeyRing | null,
    private readonly log: Logger,
  ) {
    this.ring = ring;
  }

  /** From now on `observer` is told the keys in force (at once) and every reload. */
  observe(observer: KeyRingObserver): void {
    this.observer = observer;
    observer.keyRing?.(this.ring === null ? null : this.ring.size);
  }

  /**
   * Reads the ring (a ring that does not read is a ConfigError: `run` exits 2), or, with no file
   * and CG_ALLOW_UNSIGNED=true, runs without one, said at warn.
   */
  static load(c: AuthoritySettings, log: Logger): KeyRingInForce {
    requireAuthority(c);
    if (c.trustedKeysFile === null) {
      log.warn(
        'CG_ALLOW_UNSIGNED=true and no CG_TRUSTED_KEYS_FILE: unsigned SpillCompleted, SpillFailed and LossAcknowledged ' +
          'are applied, from anyone who can write the input topic',
      );
      return new KeyRingInForce(null, null, log);
    }
    const ring = loadKeyRing(c.trustedKeysFile);
    log.info({ file: c.trustedKeysFile, keys: describeRing(ring) }, 'trusted key ring in force');
    return new KeyRingInForce(c.trustedKeysFile, ring, log);
  }

  /** The ring every batch is decided with (null: unsigned, CG_ALLOW_UNSIGNED). */
  get current(): TrustedKeyRing | null {
    return this.ring;
  }

  /**
   * Reads the file again. On success the new ring is in force from the next batch on (a revoked
   * key authorizes nothing more); on failure the old one stays, and the error is logged.
   * Returns whether the ring changed hands. Without a file there is nothing to reload.
   */
  reload(): boolean {
    if (this.file === null) {
      this.log.warn('reload asked, but no CG_TRUSTED_KEYS_FILE is set: nothing to re-read');
      return false;
    }
    let ring: TrustedKeyRing;
    try {
      ring = loadKeyRing(this.file);
    } catch (e) {
      this.observer.keyRingReload?.('failed');
      this.log.error(
        { file: this.file, err: (e as Error).message, keys: describeRing(this.ring!) },
        'trusted key ring reload failed: the keys in force stay',
      );
      return false;
    }
    this.ring = ring;
    this.observer.keyRingReload?.('loaded');
    this.observer.keyRing?.(ring.size);
    this.log.info({ file: this.file, keys: describeRing(ring) }, 'trusted key ring reloaded');
    return true;
  }
}
