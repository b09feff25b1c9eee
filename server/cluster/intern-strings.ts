// One string object for each of the few distinct client ids and names a snapshot repeats.
//
// Why. JSON.parse makes a new string for every value it reads, so a standby applying a snapshot
// kept its own copy of the same client id in each of millions of claims (a keyed client's
// connection holds all of its locks under one id), where the active shares one: tens of bytes
// per lock of heap the garbage collector copies and marks, on the node whose pauses decide
// whether the join survives. A bounded map hands back the first copy; past MAX_ENTRIES it starts
// over, so a table of all-different clients costs a lookup per claim and nothing more.
const MAX_ENTRIES = 4_096;

export class StringIntern {
  private readonly seen = new Map<string, string>();

  get(s: string): string {
    const known = this.seen.get(s);
    if (known !== undefined) return known;
    if (this.seen.size >= MAX_ENTRIES) this.seen.clear();
    this.seen.set(s, s);
    return s;
  }

  /** Drops what it holds (a snapshot ended): the strings live on in the claims that use them. */
  clear(): void {
    this.seen.clear();
  }
}
