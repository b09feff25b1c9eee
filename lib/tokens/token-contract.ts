// What the engine and a token source agree on: the top of the u64 token range, and the error a
// source throws when it cannot issue a token. Owned here, below the engine: this file imports
// nothing, so the engine may take these two values from it (and the rest of lib/tokens for types
// only; scripts/check-imports.mjs). lib/tokens/token-source.ts re-exports both for everyone else.

export const MAX_TOKEN = (1n << 64n) - 1n;

/**
 * No token can be issued now: the u64 is used up (for good: a data dir at the top stays there),
 * or the block's ceiling could not be made durable (disk full, I/O error: granting resumes once
 * a save succeeds). The engine is left as it was; the names are error names of lib/errors.ts.
 */
export class TokensUnavailable extends Error {
  constructor(
    readonly reason: 'tokens-exhausted' | 'storage-unavailable',
    options?: { cause?: unknown },
  ) {
    super(reason === 'tokens-exhausted' ? 'fencing tokens exhausted (u64)' : 'the token ceiling cannot be made durable', options);
    this.name = 'TokensUnavailable';
  }
}
