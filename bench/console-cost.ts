// `npm run bench:console`: section 5 of `npm run bench` on its own (what the operator console
// costs the lock daemon: handover p99 with five dashboards open against none). Needs a console
// build (`npm run build`).
// Usage: npm run bench:console [-- --seconds 5 --repeats 3] [--bin <checkout>/bin/baton]
// --bin serves another checkout's baton and its console build (a before/after on one machine).
import { exitWithUsageOnHelp, intFlag, stringFlag } from './flags.ts';
import { hostMachine, markdown } from './report.ts';
import { consoleSection } from './sections/console-section.ts';

exitWithUsageOnHelp(import.meta.url);

const seconds = intFlag('--seconds', 5, 120);
const repeats = intFlag('--repeats', 3, 20);
const result = await consoleSection(seconds, repeats, stringFlag('--bin'));
const machine = { ...hostMachine(), redis: '-', etcd: '-' };
console.log(markdown({ machine, date: new Date().toISOString(), seconds, repeats, setup: {}, console: result }));
