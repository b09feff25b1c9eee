// Loaded by bench/join-trace.ts --cpu-prof into the baton processes it starts (NODE_OPTIONS=--import;
// --cpu-prof may not be given there): profiles the process from its start, and on SIGUSR2 writes
// the profile to $JOIN_CPU_PROF_DIR/<pid>.cpuprofile (open it in Chrome's DevTools).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const dir = process.env.JOIN_CPU_PROF_DIR;
if (dir !== undefined && process.argv.some((a) => a.endsWith('bin/baton'))) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.start');
  process.on('SIGUSR2', () => {
    session.post('Profiler.stop', (err, res) => {
      if (err === null) writeFileSync(`${dir}/${process.pid}.cpuprofile`, JSON.stringify(res.profile));
    });
  });
}
