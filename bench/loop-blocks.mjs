// Loaded by bench/fill-pause.ts into the baton processes it starts (NODE_OPTIONS=--import): a
// 5 ms timer that notes every gap between its runs longer than 50 ms (the loop was blocked that
// long, GC included) as a JSON log line on stderr, {"msg":"loop block","ms":...}, so the bench
// reads every block from the node's log, the longest included, whatever second it fell in.
if (process.argv.some((a) => a.endsWith('bin/baton'))) {
  const PERIOD_MS = 5;
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const blocked = now - last - PERIOD_MS;
    last = now;
    if (blocked > 50) process.stderr.write(`${JSON.stringify({ msg: 'loop block', ms: Math.round(blocked) })}\n`);
  }, PERIOD_MS).unref();
}
