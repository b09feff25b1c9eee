import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The console's `@/` imports (tsconfig.app.json's paths), so its pure modules can be tested too.
  resolve: { alias: [{ find: /^@\//, replacement: fileURLToPath(new URL('./', import.meta.url)) }] },
  test: {
    globals: false,
    // A stray it.only must fail the run, not quietly narrow it.
    allowOnly: false,
    include: [
      'lib/**/*.test.ts',
      'bench/**/*.test.ts',
      'server/**/*.test.ts',
      'chaos/**/*.test.ts',
      'components/**/*.test.ts',
      'scripts/**/*.test.mjs',
      'ops/**/*.test.ts',
    ],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Integration tests spawn real servers and processes; two workers match the two cores.
    maxWorkers: 2,
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ['default', 'json'],
    outputFile: { json: 'node_modules/.cache/baton-test-report.json' },
  },
});
