/**
 * What one import record may be. Its text: Temporal refuses a payload over 2 MB, and 512 Ki
 * characters stay below that even at 3 bytes each; a longer one is rejected unread, keeping only
 * its start. Its nesting: the deepest label request the contract describes is 6 levels; what is
 * deeper is hostile, and JSON.stringify (the rejects file, Temporal's payload converter)
 * overflows the stack near 10,000 levels.
 */
export const RECORD_LIMITS = { maxChars: 512 * 1024, maxDepth: 32 } as const;

/** Characters of an over-long record kept for the report and the rejects file. */
export const PREVIEW_CHARS = 1000;
