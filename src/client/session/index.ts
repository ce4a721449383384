/** A guarded session and what its callers give and get (guardedSession.ts joins the parts). */
export { GuardedSession } from './guardedSession';
export type * from './types';
