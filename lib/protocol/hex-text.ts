// Hex digits, as both halves of the session protocol read them (claim keys, `0x0N` error codes).
// Each range is spelled out: folding case with `code | 32` first would also turn the control
// bytes 0x10-0x19 into the digits 0-9.

/** The value of the hex digit with this character code (0-9, a-f, A-F); -1 for any other code. */
export function hexDigitValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  if (code >= 97 && code <= 102) return code - 87; // a-f
  if (code >= 65 && code <= 70) return code - 55; // A-F
  return -1;
}
