/** Degenerate summaries (src/integrations/compaction/summaryCheck.ts): never committed. */
import fc from 'fast-check';
import {
  defaultMinSummaryTokens,
  degenerateSummary,
  KNOWN_ERROR_TEXTS,
  minTokensFor,
} from '../../src/integrations/compaction/summaryCheck';

const facts = (text: string, extra: Partial<Parameters<typeof degenerateSummary>[0]> = {}) => ({
  text,
  threw: false,
  summaryTokens: Math.ceil(text.trim().length / 4),
  minTokens: 5,
  ...extra,
});

describe('degenerate summaries', () => {
  it('names each kind with its own reason', () => {
    expect(degenerateSummary(facts(''))).toBe('EMPTY_SUMMARY');
    expect(degenerateSummary(facts(' \n\t '))).toBe('EMPTY_SUMMARY');
    expect(degenerateSummary(facts('Error generating summary: Error: 429'))).toBe('ERROR_SUMMARY');
    expect(degenerateSummary(facts('  previous conversation was too long to summarize.'))).toBe(
      'ERROR_SUMMARY',
    );
    expect(degenerateSummary(facts('No previous conversation history.'))).toBe('ERROR_SUMMARY');
    expect(degenerateSummary(facts('OK.'))).toBe('SUMMARY_TOO_SHORT');
    expect(
      degenerateSummary(facts('A fine summary of the work done so far.', { threw: true })),
    ).toBe('SUMMARIZER_THREW');
    expect(degenerateSummary(facts('The agent read ten logs; all were clean.'))).toBeNull();
  });

  it('refuses every text that starts with a known error text, whatever follows', () => {
    fc.assert(
      fc.property(fc.constantFrom(...KNOWN_ERROR_TEXTS), fc.string(), (error, tail) => {
        expect(degenerateSummary(facts(`${error}${tail}`, { minTokens: 0 }))).toBe('ERROR_SUMMARY');
      }),
    );
  });

  it('a summarizer that threw is refused whatever it returned', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(degenerateSummary(facts(text, { threw: true }))).toBe('SUMMARIZER_THREW');
      }),
    );
  });

  it('needs one token per hundred read, at most 32, or the minimum given', () => {
    expect(defaultMinSummaryTokens(99)).toBe(0);
    expect(defaultMinSummaryTokens(2_000)).toBe(20);
    expect(defaultMinSummaryTokens(1_000_000)).toBe(32);
    expect(minTokensFor(7, 1_000_000)).toBe(7);
    expect(minTokensFor((n) => n / 10, 500)).toBe(50);
  });
});
