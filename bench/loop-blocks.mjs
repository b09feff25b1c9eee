// Loaded by bench/fill-pause.ts into the baton processes it starts (NODE_OPTIONS=--import): a
// 5 ms timer that notes every gap between its runs longer than 50 ms (the loop was blocked that
// long) as a JSON log line on stderr, {"msg":"loop block","ms":...,"cpuMs":...}, so the bench
// reads every block from the node's log, the longest included, whatever second it fell in.
// cpuMs: the process's CPU time (user + system, every thread: GC helpers too) over the gap. A
// block with little CPU is a process that waited for a core (or the disk) on a loaded machine;
// one with as much CPU as wall time is the process's own work in one go.
if (process.argv.some((a) => a.endsWith('bin/baton'))) {
  const PERIOD_MS = 5;
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage();
    const blocked = now - last - PERIOD_MS;
    if (blocked > 50) {
      const cpuMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000;
      process.stderr.write(`${JSON.stringify({ msg: 'loop block', ms: Math.round(blocked), cpuMs: Math.round(cpuMs) })}\n`);
    }
    last = now;
    lastCpu = cpu;
  }, PERIOD_MS).unref();
}
