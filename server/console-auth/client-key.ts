// The key a client is counted under by the HTTP port's per-client limits (sign-ins, event
// streams): its IPv4 address, or its IPv6 /64 (one host usually holds a whole /64, and could
// otherwise rotate addresses to reset its count). IPv4-mapped IPv6 ("::ffff:10.0.0.1") counts
// as the IPv4 address.

/** The counting key of a client address (see above); anything that is not an IPv6 address is kept as it is, lower-cased. */
export function clientKey(address: string): string {
  const a = address.toLowerCase();
  if (!a.includes(':')) return a;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  const ipv4 = mapped?.[1];
  if (ipv4 !== undefined) return ipv4;
  const halves = a.split('::');
  if (halves.length > 2) return a;
  const [first = '', second = ''] = halves;
  const head = first === '' ? [] : first.split(':');
  const tail = halves.length === 2 && second !== '' ? second.split(':') : [];
  const groups = halves.length === 2 ? [...head, ...Array<string>(Math.max(0, 8 - head.length - tail.length)).fill('0'), ...tail] : head;
  if (groups.length !== 8) return a;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
