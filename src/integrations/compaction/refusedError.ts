/**
 * The error an integration's agent run fails with under `onRefusal: 'throw'`. It lives beside
 * the refusal it carries, not in the client: the client knows nothing of integrations, they
 * build on it (docs/decisions.md 200).
 */
import { errorClass } from '../../errors';
import { type GuardRefusal, describeRefusal } from './refusal';

/** Thrown by the agent run in `onRefusal: 'throw'` mode; the history is left intact. */
export class CompactionRefusedError extends errorClass(
  'COMPACTION_REFUSED',
  'CompactionRefusedError',
) {
  constructor(readonly refusal: GuardRefusal) {
    super(describeRefusal(refusal));
  }
}
