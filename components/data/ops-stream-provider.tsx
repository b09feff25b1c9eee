// Owns the console's single event stream for the life of the tab. `useRestartStream` lets sign-in
// and sign-out start it again with the new cookie.
import { useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { connectOpsStream } from './ops-stream.ts';

const RestartContext = createContext<() => void>(() => {});

export function OpsStreamProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [generation, setGeneration] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new `generation` is how restart() asks for a new stream.
  useEffect(() => {
    const stream = connectOpsStream(queryClient);
    return () => stream.close();
  }, [queryClient, generation]);
  const restart = useCallback(() => setGeneration((g) => g + 1), []);
  return <RestartContext value={restart}>{children}</RestartContext>;
}

export function useRestartStream(): () => void {
  return useContext(RestartContext);
}
