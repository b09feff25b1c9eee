// The floor's keyed protocol as one function from a request line (no line ending) to its reply
// line: what the bare line server (floor-line-server.ts) does per request once the line is read,
// kept apart so bench/floor-budget.ts can time exactly this work without sockets.
//   `A <key> ...` -> `A <key> <token>`; `R <key> <token>` -> `R <key> OK|STALE`; `I <identity>` -> `I OK`.
// Replies echo the op and the key, which is all KeyedClient matches on. A held key is not queued
// for: `E A <key> ...` (KeyedClient rejects that acquire and keeps the connection); the
// uncontended pairs never meet one.

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
