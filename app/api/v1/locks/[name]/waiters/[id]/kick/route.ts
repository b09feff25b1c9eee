import { kickWaiter } from '@/server/api-handlers/lock-actions.ts';
import { otherMethods, withDaemon } from '@/server/api-handlers/route-kit.ts';

export const dynamic = 'force-dynamic';

export const POST = withDaemon<{ name: string; id: string }>(kickWaiter);
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
