'use client';
// The console page's client side: everything below reads the query cache that the event
// stream (app/providers.tsx → OpsStreamProvider) writes.
import dynamic from 'next/dynamic';
import { useState } from 'react';
import { BELOW_THE_FOLD } from './ui/below-the-fold.ts';
import { cn } from './ui/cn.ts';
import { LostContactBanner } from './alive/lost-contact-banner.tsx';
import { AuthPanel } from './auth/auth-panel.tsx';
import { DashboardHeader } from './dashboard-header.tsx';
import { useStreamStatus } from './data/queries.ts';
import { AuditLog } from './feed/audit-log.tsx';
import { EventsFeed } from './feed/events-feed.tsx';
import { ClientViewPanel } from './clients/client-view.tsx';
import { LocksSection } from './locks/locks-section.tsx';
import { NodeCard } from './overview/node-card.tsx';
import { NodeStrip } from './overview/node-strip.tsx';
import { PeersCard } from './overview/peers-card.tsx';
import { StandbyBanner } from './overview/standby-banner.tsx';
import { LatencyCard, TotalsCard } from './overview/totals-card.tsx';

// The charts (Recharts, about a third of the page's script) load after the page is up: they sit
// below the lock table, and parsing them before the first data cost the page's first view.
const ChartsSection = dynamic(() => import('./charts/charts-section.tsx').then((m) => m.ChartsSection), {
  ssr: false,
  loading: () => <p className="text-sm text-slate-600 dark:text-slate-400">Loading charts…</p>,
});

export function Dashboard() {
  const { needsSignIn, phase } = useStreamStatus();
  const [draftValue, setDraftValue] = useState('');
  const draft = { value: draftValue, set: setDraftValue };
  return (
    <>
      <a
        href="#locks-heading"
        className="sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-20 focus:rounded focus:bg-white focus:p-2 dark:focus:bg-slate-900"
      >
        Skip to locks
      </a>
      <DashboardHeader />
      {/* The lock table is the page's reason to exist: at 1440x900 its first rows show without
          scrolling, under a one-line summary of the node; the detailed cards follow it.
          data-stale greys everything but the lost-contact banner (globals.css) while the stream is lost. */}
      <main data-stale={phase === 'disconnected' && !needsSignIn ? '' : undefined} className="mx-auto flex max-w-screen-2xl flex-col gap-3 px-4 py-3">
        <LostContactBanner />
        <StandbyBanner />
        {needsSignIn && <AuthPanel draft={draft} />}
        <NodeStrip />
        <LocksSection clientPanel={ClientViewPanel} />
        <section aria-labelledby="overview-heading" className={cn('flex min-w-0 flex-col gap-3 pt-3', BELOW_THE_FOLD)}>
          <h2 id="overview-heading" className="text-lg font-semibold">
            Overview
          </h2>
          <div className="grid min-w-0 gap-4 md:grid-cols-2 xl:grid-cols-3">
            <NodeCard />
            <PeersCard className="xl:row-span-2" />
            {!needsSignIn && <AuthPanel draft={draft} />}
            <TotalsCard />
            <LatencyCard />
          </div>
        </section>
        <ChartsSection />
        <div data-testid="feed-and-audit" className={cn('grid min-w-0 gap-4 lg:grid-cols-[minmax(0,2fr)_minmax(0,1fr)]', BELOW_THE_FOLD)}>
          <EventsFeed />
          <AuditLog />
        </div>
      </main>
    </>
  );
}
