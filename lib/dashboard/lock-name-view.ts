// How the dashboard shows a lock name so that two different locks never look the same. A key
// may hold characters that render as nothing or as blank (U+3164 HANGUL FILLER, U+2800 BRAILLE
// PATTERN BLANK, variation selectors and other default-ignorable code points), combining marks
// that make a decomposed name look like a composed one ("e" + U+0301 against "é"), and letters
// of several scripts ("pаypal" with a Cyrillic "а"). Pure, so the rule is unit-tested apart
// from React: components/locks/lock-name.tsx draws what this returns.
//
// The rule:
// - a code point that shows nothing (control, format, separator or space, private use,
//   unassigned, lone surrogate, default-ignorable, or a known blank glyph) is shown as a
//   `\u{XXXX}` escape, drawn as a badge;
// - in a name that is not in Unicode NFC, every combining mark is escaped too (an NFC name
//   keeps its marks: Thai or Devanagari names stay readable);
// - a backslash is shown as `\\`, so no name's text can pass for an escape;
// - letters from more than one script, other than the combinations one language writes
//   (UTS #39 "highly restrictive": Latin with Han and Hiragana/Katakana, Bopomofo or Hangul),
//   mark the name as mixed-script, with the scripts named;
// - a name written wholly in Cyrillic or Greek letters that each pass for a Latin one ("аре",
//   "ΤΟΡ") is marked as looking Latin, so it does not pass for the Latin name it copies.
// So `text` spells the name unambiguously (it decodes back to it), and it has no invisible
// character left in it.

export type NamePart = { readonly kind: 'text'; readonly text: string } | { readonly kind: 'escape'; readonly text: string; readonly codePoint: number };

export interface LockNameView {
  readonly parts: readonly NamePart[];
  /** The visible spelling: the parts joined. Different names always have different texts. */
  readonly text: string;
  /** Scripts of the name's letters, in first-seen order, when they mix; null otherwise. */
  readonly mixedScripts: readonly string[] | null;
  /** The script of a name whose every letter is a Cyrillic or Greek look-alike of a Latin one; null otherwise. */
  readonly looksLatin: 'Cyrillic' | 'Greek' | null;
  /** Something here is not what a plain reading of the name would show: an escape, mixed scripts or Latin look-alikes. */
  readonly marked: boolean;
}

const INVISIBLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Z}\p{White_Space}\p{Default_Ignorable_Code_Point}\u2800]/u;
const MARK = /\p{M}/u;
const LETTER = /\p{L}/u;

// The scripts a look-alike is usually drawn from, tested in order; any other letter counts as "Other".
const SCRIPTS: ReadonlyArray<readonly [string, RegExp]> = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
  ['Armenian', /\p{Script=Armenian}/u],
  ['Georgian', /\p{Script=Georgian}/u],
  ['Cherokee', /\p{Script=Cherokee}/u],
  ['Hebrew', /\p{Script=Hebrew}/u],
  ['Arabic', /\p{Script=Arabic}/u],
  ['Han', /\p{Script=Han}/u],
  ['Hiragana', /\p{Script=Hiragana}/u],
  ['Katakana', /\p{Script=Katakana}/u],
  ['Bopomofo', /\p{Script=Bopomofo}/u],
  ['Hangul', /\p{Script=Hangul}/u],
  ['Thai', /\p{Script=Thai}/u],
  ['Devanagari', /\p{Script=Devanagari}/u],
];

/** Script sets one language writes together (UTS #39 highly restrictive); any subset is not "mixed". */
const ALLOWED_SETS: ReadonlyArray<ReadonlySet<string>> = [
  new Set(['Latin', 'Han', 'Hiragana', 'Katakana']),
  new Set(['Latin', 'Han', 'Bopomofo']),
  new Set(['Latin', 'Han', 'Hangul']),
];

// Letters that render like a Latin letter in common fonts (a subset of Unicode's confusables).
const LATIN_LOOKALIKES: Readonly<Record<'Cyrillic' | 'Greek', ReadonlySet<string>>> = {
  Cyrillic: new Set([...'аеорсухіјѕԁԛԝһӏАВЕКМНОРСТУХІЈЅҮ']),
  Greek: new Set([...'οαικνρυΑΒΕΖΗΙΚΜΝΟΡΤΥΧ']),
};

function looksLatinIn(letters: string, script: string): 'Cyrillic' | 'Greek' | null {
  if (script !== 'Cyrillic' && script !== 'Greek') return null;
  const set = LATIN_LOOKALIKES[script];
  for (const ch of letters) if (!set.has(ch)) return null;
  return script;
}

function scriptOf(ch: string): string {
  for (const [name, re] of SCRIPTS) if (re.test(ch)) return name;
  return 'Other';
}

function escapeOf(cp: number): string {
  return `\\u{${cp.toString(16).toUpperCase().padStart(4, '0')}}`;
}

/** Visible ASCII without a backslash: the common name, shown as it is. */
function isPlainAscii(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f || c === 0x5c) return false;
  }
  return true;
}

export function viewLockName(name: string): LockNameView {
  if (isPlainAscii(name)) return { parts: [{ kind: 'text', text: name }], text: name, mixedScripts: null, looksLatin: null, marked: false };
  const escapeMarks = name.normalize('NFC') !== name;
  const parts: NamePart[] = [];
  const scripts: string[] = [];
  let run = '';
  let letters = '';
  let escaped = false;
  // for..of walks code points; a lone surrogate comes through as one unit (and is escaped).
  for (const ch of name) {
    const cp = ch.codePointAt(0) as number;
    if (INVISIBLE.test(ch) || (escapeMarks && MARK.test(ch))) {
      if (run !== '') parts.push({ kind: 'text', text: run });
      run = '';
      parts.push({ kind: 'escape', text: escapeOf(cp), codePoint: cp });
      escaped = true;
      continue;
    }
    run += cp === 0x5c ? '\\\\' : ch;
    if (LETTER.test(ch)) {
      letters += ch;
      const script = scriptOf(ch);
      if (!scripts.includes(script)) scripts.push(script);
    }
  }
  if (run !== '') parts.push({ kind: 'text', text: run });
  const mixed = scripts.length > 1 && !ALLOWED_SETS.some((set) => scripts.every((s) => set.has(s)));
  const only = scripts.length === 1 ? scripts[0] : undefined;
  const looksLatin = only === undefined ? null : looksLatinIn(letters, only);
  return { parts, text: parts.map((p) => p.text).join(''), mixedScripts: mixed ? scripts : null, looksLatin, marked: escaped || mixed || looksLatin !== null };
}

/** Reads a view's text back into the name (the inverse of viewLockName's text; for tests and tools). */
export function nameFromText(text: string): string {
  return text.replace(/\\\\|\\u\{([0-9A-F]+)\}/g, (_whole, hex: string | undefined) =>
    hex === undefined ? '\\' : String.fromCodePoint(Number.parseInt(hex, 16)),
  );
}
