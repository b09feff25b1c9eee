// Plain decimal numbers in reply text, as the clients read them (ports, queue positions). The
// server reads its request fields from bytes instead (wire-fields.ts), without making strings.

/**
 * A plain decimal number of 1 to `maxDigits` digits (no sign, no dot), scanned without a regex;
 * undefined for anything else. Up to 15 digits stay exact in a double.
 */
export function parseDigits(text: string, maxDigits: number): number | undefined {
  if (text.length === 0 || text.length > maxDigits) return undefined;
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    value = value * 10 + digit;
  }
  return value;
}
