// Loaded by bench/join-trace.ts into the baton processes it starts (NODE_OPTIONS=--import):
// --trace-gc may not be given in NODE_OPTIONS, so it is switched on here, in baton only.
import v8 from 'node:v8';

if (process.argv.some((a) => a.endsWith('bin/baton'))) v8.setFlagsFromString('--trace-gc');
