// What the bare line server (floor-line-server.ts) does with a chunk once it is read: split it
// into lines and answer each (answerLines), the keyed protocol's answers as one function from a
// request line to its reply (floorKeyedAnswer). Kept apart from the sockets so
// bench/floor-budget.ts times exactly this work without them.
//   `A <key> ...` -> `A <key> <token>`; `R <key> <token>` -> `R <key> OK|STALE`; `I <identity>` -> `I OK`.
// Replies echo the op and the key, which is all KeyedClient matches on. A held key is not queued
// for: `E A <key> ...` (KeyedClient rejects that acquire and keeps the connection); the
// uncontended pairs never meet one.

/**
 * Answers every complete line of `text` (without `\n` or `\r\n`; empty lines get no answer) and
 * returns all the answers as one string. What follows the last `\n` is left for the caller.
 */
export function answerLines(text: string, answer: (line: string) => string): string {
  let out = '';
  let start = 0;
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
    const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
    if (end > start) out += answer(text.slice(start, end));
    start = nl + 1;
  }
  return out;
}

/** One token counter per process for both protocols, as the floor server has. */
export const floorTokens = {
  last: 0,
  next(): number {
    return ++this.last;
  },
};

export function floorKeyedAnswer(): (line: string) => string {
  const heldKeys = new Map<string, string>();
  return (line) => {
    // The client's identity (`I <identity>`, sent once per connection by default): taken, not kept.
    if (line.charCodeAt(0) === 73 /* I */) return 'I OK\n';
    const keyEnd = line.indexOf(' ', 2);
    const key = line.slice(2, keyEnd);
    if (line.charCodeAt(0) === 65 /* A */) {
      if (heldKeys.has(key)) return `E A ${key} floor-busy the floor does not queue\n`;
      const token = String(floorTokens.next());
      heldKeys.set(key, token);
      return `A ${key} ${token}\n`;
    }
    // An R: its token is the rest of the line, compared as text (both sides write plain decimal).
    if (heldKeys.get(key) !== line.slice(keyEnd + 1)) return `R ${key} STALE\n`;
    heldKeys.delete(key);
    return `R ${key} OK\n`;
  };
}
