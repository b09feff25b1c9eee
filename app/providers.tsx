'use client';
// One QueryClient per browser tab, and the one event stream that fills it.
import { notifyManager, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { retryUnlessClientError } from '@/components/data/api-client.ts';
import { OpsStreamProvider } from '@/components/data/ops-stream-provider.tsx';

function makeQueryClient(): QueryClient {
  // Query updates reach components in a microtask of the task that made them, not in a
  // setTimeout(0) task of their own: the stream's data and the countdowns' tick (one task) then
  // draw as one frame instead of two (a Chromium trace at 10,000 locks under churn counted
  // both).
  notifyManager.setScheduler(queueMicrotask);
  return new QueryClient({
    defaultOptions: {
      queries: {
        // State arrives over the event stream; nothing refetches on focus or reconnect by itself.
        refetchOnWindowFocus: false,
        refetchOnReconnect: false,
        retry: retryUnlessClientError,
      },
      mutations: { retry: false },
    },
  });
}

export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  return (
    <QueryClientProvider client={queryClient}>
      <OpsStreamProvider>{children}</OpsStreamProvider>
    </QueryClientProvider>
  );
}
