import { getClientHeld } from '@/server/api-handlers/client-actions.ts';
import { otherMethods, withDaemon } from '@/server/api-handlers/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon(getClientHeld);
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
