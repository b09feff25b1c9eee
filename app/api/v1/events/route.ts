// GET /api/v1/events: the dashboard's live feed (server-sent events); see server/api-handlers/events-route.ts.
import { eventsRoute } from '@/server/api-handlers/events-route.ts';
import { otherMethods, withDaemon } from '@/server/api-handlers/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon(eventsRoute);
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
