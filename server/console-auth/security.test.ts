import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from './host-guard.ts';
import { cookieValue, MAX_ADMIN_SESSIONS, MAX_READ_SESSIONS, Security, SESSION_MAX_AGE_SECONDS } from './security.ts';

const ADMIN = 'the-admin-token';
const READ = 'the-read-token';

function security(options: { readToken?: string | null; host?: string; now?: () => number } = {}): Security {
  return new Security({
    adminToken: ADMIN,
    readToken: options.readToken ?? null,
    host: options.host ?? '127.0.0.1',
    ...(options.now ? { now: options.now } : {}),
  });
}

function cookieOf(s: Security, token: string): string {
  const session = s.signIn(token);
  if (session === null) throw new Error('sign-in failed');
  return `baton_session=${session.cookieValue}`;
}

describe('readsOpen', () => {
  it('is open on a loopback host without a read token', () => {
    for (const host of ['127.0.0.1', '127.8.9.10', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1']) expect(security({ host }).readsOpen).toBe(true);
  });

  it('is closed on a non-loopback host', () => {
    for (const host of ['0.0.0.0', '10.0.0.5', '::', 'example.com', '128.0.0.1']) expect(security({ host }).readsOpen).toBe(false);
  });

  it('is closed on loopback when a read token is set', () => {
    expect(security({ readToken: READ }).readsOpen).toBe(false);
  });
});

describe('identify', () => {
  it('knows the admin bearer token', () => {
    expect(security().identify(`Bearer ${ADMIN}`, null)).toEqual({ kind: 'bearer', role: 'admin', name: 'admin' });
  });

  it('knows the read bearer token', () => {
    expect(security({ readToken: READ }).identify(`Bearer ${READ}`, null)).toEqual({ kind: 'bearer', role: 'read', name: 'read' });
  });

  it('takes the bearer scheme in any case', () => {
    expect(security().identify(`bearer ${ADMIN}`, null)).toMatchObject({ role: 'admin' });
  });

  it('treats a wrong bearer token as anonymous', () => {
    expect(security().identify('Bearer nope', null)).toEqual({ kind: 'anonymous' });
  });

  it('treats a token that only shares a prefix with the admin token as anonymous', () => {
    expect(security().identify(`Bearer ${ADMIN}x`, null)).toEqual({ kind: 'anonymous' });
    expect(security().identify(`Bearer ${ADMIN.slice(0, -1)}`, null)).toEqual({ kind: 'anonymous' });
  });

  it('lets none of 2,000 random wrong tokens in (the whole digest is compared)', () => {
    const s = security();
    for (let i = 0; i < 2_000; i++) {
      const guess = randomBytes(24).toString('base64url');
      expect(s.identify(`Bearer ${guess}`, null)).toEqual({ kind: 'anonymous' });
    }
  });

  it('does not let a wrong bearer token fall back to a good session cookie', () => {
    const s = security();
    expect(s.identify('Bearer nope', cookieOf(s, ADMIN))).toEqual({ kind: 'anonymous' });
  });

  it('treats other authorization schemes as anonymous', () => {
    expect(security().identify(`Basic ${ADMIN}`, null)).toEqual({ kind: 'anonymous' });
  });

  it('is anonymous with neither header', () => {
    expect(security().identify(null, null)).toEqual({ kind: 'anonymous' });
  });

  it('knows a live session cookie among other cookies', () => {
    const s = security();
    const session = s.signIn(ADMIN);
    expect(s.identify(null, `theme=dark; baton_session=${session?.cookieValue}; other=1`)).toEqual({ kind: 'session', role: 'admin', name: session?.publicId });
  });

  it('treats an unknown session cookie as anonymous', () => {
    expect(security().identify(null, 'baton_session=made-up')).toEqual({ kind: 'anonymous' });
  });
});

describe('sessions', () => {
  it('gives a read session to the read token', () => {
    expect(security({ readToken: READ }).signIn(READ)).toMatchObject({ role: 'read', maxAgeSeconds: SESSION_MAX_AGE_SECONDS });
  });

  it('refuses a wrong token', () => {
    expect(security({ readToken: READ }).signIn('wrong')).toBeNull();
  });

  it('makes a 32-byte base64url cookie value and an 8-hex-digit public id unrelated to it', () => {
    const session = security().signIn(ADMIN);
    expect(session?.cookieValue).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session?.publicId).toMatch(/^[0-9a-f]{8}$/);
    expect(session?.cookieValue).not.toContain(session?.publicId ?? '-');
  });

  it('makes a new cookie for every sign-in', () => {
    const s = security();
    expect(s.signIn(ADMIN)?.cookieValue).not.toBe(s.signIn(ADMIN)?.cookieValue);
  });

  it('lasts 12 hours and no longer', () => {
    let now = 0;
    const s = security({ now: () => now });
    const cookie = cookieOf(s, ADMIN);
    now = SESSION_MAX_AGE_SECONDS * 1000 - 1;
    expect(s.identify(null, cookie).kind).toBe('session');
    now += 1;
    expect(s.identify(null, cookie)).toEqual({ kind: 'anonymous' });
  });

  it('ends at sign-out', () => {
    const s = security();
    const cookie = cookieOf(s, ADMIN);
    s.signOut(cookie);
    expect(s.identify(null, cookie)).toEqual({ kind: 'anonymous' });
  });

  it('keeps at most 100 admin sessions by dropping the oldest admin session', () => {
    const s = security();
    const first = cookieOf(s, ADMIN);
    const second = cookieOf(s, ADMIN);
    for (let i = 2; i < MAX_ADMIN_SESSIONS; i++) cookieOf(s, ADMIN);
    expect(s.sessionCount).toBe(MAX_ADMIN_SESSIONS);
    cookieOf(s, ADMIN);
    expect(s.sessionCount).toBe(MAX_ADMIN_SESSIONS);
    expect(s.identify(null, first)).toEqual({ kind: 'anonymous' });
    expect(s.identify(null, second).kind).toBe('session');
  });

  it('never ends an admin session for read sign-ins: 1,000 and more of them push out only read sessions', () => {
    const s = security({ readToken: READ });
    const admin = cookieOf(s, ADMIN);
    const firstRead = cookieOf(s, READ);
    for (let i = 0; i < MAX_READ_SESSIONS + 500; i++) cookieOf(s, READ);
    expect(s.identify(null, admin)).toMatchObject({ kind: 'session', role: 'admin' });
    expect(s.identify(null, firstRead)).toEqual({ kind: 'anonymous' });
    expect(s.sessionCount).toBe(MAX_READ_SESSIONS + 1);
  });

  it('ends a read session at its sign-out without touching an admin one', () => {
    const s = security({ readToken: READ });
    const admin = cookieOf(s, ADMIN);
    const read = cookieOf(s, READ);
    s.signOut(read);
    expect(s.identify(null, read)).toEqual({ kind: 'anonymous' });
    expect(s.identify(null, admin)).toMatchObject({ role: 'admin' });
  });
});

describe('sign-in limits', () => {
  it('admits 10 sign-ins a minute per client address, then answers how long to wait; other addresses go on', () => {
    let now = 0;
    const s = security({ now: () => now });
    for (let i = 0; i < 10; i++) expect(s.admitSignIn('10.0.0.1')).toBeNull();
    expect(s.admitSignIn('10.0.0.1')).toBe(60);
    now = 45_500;
    expect(s.admitSignIn('10.0.0.1')).toBe(15);
    expect(s.admitSignIn('10.0.0.2')).toBeNull();
    now = 60_000;
    expect(s.admitSignIn('10.0.0.1')).toBeNull();
  });

  it('audits every admin sign-in, and at most 10 read sign-ins and 10 failures a minute', () => {
    let now = 0;
    const s = security({ now: () => now });
    const read = Array.from({ length: 30 }, () => s.auditSignIn('read'));
    expect(read.filter(Boolean)).toHaveLength(10);
    expect(Array.from({ length: 30 }, () => s.auditSignIn('admin')).every(Boolean)).toBe(true);
    expect(Array.from({ length: 30 }, () => s.noteFailedSignIn()).filter(Boolean)).toHaveLength(10);
    now = 60_000;
    expect(s.auditSignIn('read')).toBe(true);
  });
});

describe('construction', () => {
  it('refuses an empty admin token', () => {
    expect(() => new Security({ adminToken: '', readToken: null, host: '127.0.0.1' })).toThrow(RangeError);
  });

  it('refuses an empty read token', () => {
    expect(() => new Security({ adminToken: ADMIN, readToken: '', host: '127.0.0.1' })).toThrow(RangeError);
  });
});

describe('helpers', () => {
  it('reads one cookie out of a Cookie header', () => {
    expect(cookieValue('a=1; b=2=3', 'b')).toBe('2=3');
    expect(cookieValue('a=1', 'b')).toBeNull();
  });

  it('tells loopback hosts apart from others', () => {
    expect(isLoopbackHost('LOCALHOST')).toBe(true);
    expect(isLoopbackHost('127.0.0.1.example.com')).toBe(false);
  });
});
