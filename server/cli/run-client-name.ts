// The identity `baton run` gives its session: `baton run <command> @<host> pid <pid>`, the
// command written as a shell would need it typed, so `sh -c "echo a b"` and `sh -c echo a b`
// read differently on the console. Joining the words with spaces lost exactly that.
import { MAX_CLIENT_NAME_BYTES, toClientName } from '../../lib/protocol/client-name.ts';

/** Words a POSIX shell reads as they are: nothing to quote. */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;
/**
 * What an identity may not carry (lib/protocol/client-name.ts: controls, format characters,
 * separators, whitespace but the space) and lone surrogates: written as escapes in $'...'.
 */
const UNSHOWABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]|[^\S ]/u;
/** Special inside double quotes. */
const DOUBLE_QUOTE_SPECIAL = /[$`\\"]/;
/** Where a cut command is marked as cut. */
const ELLIPSIS = '…';

const C_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\t': '\\t', '\r': '\\r', '\\': '\\\\', "'": "\\'" };

function hexBytes(ch: string): string {
  return [...Buffer.from(ch, 'utf8')].map((b) => `\\x${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/**
 * One argument as a POSIX shell reads it back, quoted only where needed: plain words as they
 * are (printable non-ASCII letters included), `''` for the empty one, single quotes around
 * spaces and specials, double quotes when the word has a `'` and nothing special to them, and
 * `$'...'` (POSIX.1-2024, bash, zsh, ksh; not dash) with `\n`, `\t` or `\xHH` escapes for
 * characters an identity cannot show (newlines, controls, zero-width and bidi characters).
 */
export function shellQuote(arg: string): string {
  if (arg === '') return "''";
  if (UNSHOWABLE.test(arg)) {
    let out = '';
    for (const ch of arg) out += C_ESCAPES[ch] ?? (UNSHOWABLE.test(ch) ? hexBytes(ch) : ch);
    return `$'${out}'`;
  }
  if ([...arg].every((ch) => PLAIN.test(ch) || (ch.codePointAt(0) ?? 0) > 0x7f)) return arg;
  if (!arg.includes("'")) return `'${arg}'`;
  if (!DOUBLE_QUOTE_SPECIAL.test(arg)) return `"${arg}"`;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The first characters of `text` that fit in `limit` bytes. */
function cutBytes(text: string, limit: number): string {
  let out = '';
  for (const ch of text) {
    if (bytes(out + ch) > limit) break;
    out += ch;
  }
  return out;
}

/**
 * `baton run <quoted command> @<host> pid <pid>`, at most 128 bytes: the host and pid are always
 * kept; a command too long for the rest is cut after its last whole word that fits (inside its
 * first word when not even that fits) and ends in `…`, so a cut identity never reads as a
 * shorter, complete command.
 */
export function runClientName(command: readonly string[], host: string, pid: number): string | null {
  const tail = ` @${host} pid ${pid}`;
  const room = MAX_CLIENT_NAME_BYTES - bytes(tail);
  const words = command.map(shellQuote);
  let head = ['baton run', ...words].join(' ');
  if (bytes(head) > room) {
    head = 'baton run';
    const marked = room - bytes(` ${ELLIPSIS}`);
    for (const word of words) {
      if (bytes(`${head} ${word}`) > marked) break;
      head += ` ${word}`;
    }
    head = head === 'baton run' ? `${cutBytes(`baton run ${words[0] ?? ''}`, room - bytes(ELLIPSIS))}${ELLIPSIS}` : `${head} ${ELLIPSIS}`;
  }
  // The host name comes from the OS: toClientName keeps the whole line a valid identity whatever it holds.
  return toClientName(head + tail);
}
