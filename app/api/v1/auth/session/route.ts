import { getSession, signIn, signOut } from '@/server/api-handlers/auth-session.ts';
import { otherMethods, withDaemon } from '@/server/api-handlers/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon(getSession);
export const POST = withDaemon(signIn);
export const DELETE = withDaemon(signOut);
export const { PUT, PATCH, OPTIONS } = otherMethods('GET', 'POST', 'DELETE');
