// Debian's Chromium as the browser benchmarks launch it: the same flags as playwright.config.ts,
// so no traffic goes beyond 127.0.0.1.
import { type Browser, chromium } from '@playwright/test';

export const CHROMIUM = '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
