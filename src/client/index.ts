/**
 * `compaction-guard/client`: what an agent orchestrator needs to use compaction-guard
 * (docs/integration.md). The product's contract is docs/contract.md.
 */
export { GuardClient, DEFAULT_VERDICT_TIMEOUT_MS } from './client';
export type { GuardClientOptions, EventFormat, OutOfBandEvent, OutOfBandOptions } from './client';
export {
  DEFAULT_SIGNATURE_VALIDITY_MS,
  expiryFrom,
  loadSigningKey,
  parseSigningKey,
  signed,
  signatureFor,
} from '../authority/signing';
export type { SigningKey } from '../authority/signing';
export type { TranscriptContent } from './transcript';
export { SpillWorker } from './spillWorker';
export type { SpillSource, SpillSourceAnswer, SpillWorkerOptions } from './spillWorker';
export { storeVouched, turnPiece, vouchedRange } from './vouch';
export type { PiecePosition, TranscriptPiece, Vouched, VouchedSpill } from './vouch';
export * from './session';
export { DEFAULT_MAX_SPILL_READ_BYTES, FileSpillStore } from './spill';
export type { FileSpillStoreOptions, SpillStore, SpillWrite } from './spill';
export {
  GuardClosedError,
  GuardNotConnectedError,
  GuardSendError,
  GuardTimeoutError,
  GuardUsageError,
  SpillIntegrityError,
  SpillNotTrustedError,
  SpillStoreError,
} from './errors';
export { embeddedStateFile, readEmbeddedState, resolveConnection } from './connection';
export type { EmbeddedState } from './connection';
export type { Policy, Pin, Role, Span, Unit } from '../engine/events';
export type { Verdict, Reason, RuleCode, Decision, Basis, Action } from '../engine/outputs';
