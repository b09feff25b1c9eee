// Dashboard tests in a real browser: Debian's Chromium (never a downloaded one), driving a real
// `baton serve` that each test file starts on free ports (e2e/fixtures/baton-server.ts).
import { defineConfig } from '@playwright/test';

const root = import.meta.dirname;

export default defineConfig({
  testDir: 'e2e',
  // One worker: a server plus Chromium already keep two cores busy.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  // A stray test.only must fail the run, not quietly narrow it.
  forbidOnly: true,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  outputDir: 'test-results/e2e',
  reporter: [['list'], ['json', { outputFile: `${root}/node_modules/.cache/baton-e2e-report.json` }]],
  use: {
    // Screenshots of every test are kept as artifacts in test-results/e2e.
    screenshot: 'on',
    trace: 'retain-on-failure',
    viewport: { width: 1280, height: 900 },
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
});
