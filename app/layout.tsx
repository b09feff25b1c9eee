import type { Metadata, Viewport } from 'next';
import type { ReactNode } from 'react';
import { Providers } from './providers.tsx';
import './globals.css';

// Rendered per request, not prerendered: each answer has its own CSP nonce (set by the custom
// server, server/http/security-headers.ts), and Next writes it on every script tag only when it
// renders the page for that request.
export const dynamic = 'force-dynamic';

export const metadata: Metadata = { title: 'Baton console', description: 'Operator console for the Baton lock service' };

export const viewport: Viewport = {
  width: 'device-width',
  initialScale: 1,
  colorScheme: 'light dark',
  themeColor: [
    { media: '(prefers-color-scheme: light)', color: '#ffffff' },
    { media: '(prefers-color-scheme: dark)', color: '#020617' },
  ],
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen bg-slate-50 font-sans text-slate-900 antialiased dark:bg-slate-950 dark:text-slate-100">
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
