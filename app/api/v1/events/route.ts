// GET /api/v1/events: the dashboard's live feed (server-sent events); see server/ops-api/events-route.ts.
import { eventsRoute } from '@/server/ops-api/events-route.ts';
import { otherMethods, withDaemon } from '@/server/ops-api/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon(eventsRoute);
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
