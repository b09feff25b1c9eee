// Who may use the ops API: bearer tokens (admin or read) and dashboard sessions bought with
// one of them. Secrets are compared as SHA-256 digests with timingSafeEqual, so neither the
// length nor the first differing byte of a guess shows in the response time; sessions are
// looked up by the digest of their cookie value for the same reason.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isLoopbackHost } from './host-guard.ts';
import { AuditBudget, SignInLimiter } from './sign-in-limits.ts';
import { type Principal, SESSION_COOKIE, type SecurityFacade } from '../../lib/ops-api/daemon-facade.ts';

export const SESSION_MAX_AGE_SECONDS = 12 * 60 * 60;
/**
 * A flood of sign-ins must not grow memory without end: past these the oldest session of the
 * same role goes first. The pools are separate, so signing in with the read token never ends
 * an admin's session (only another admin sign-in can push one out).
 */
export const MAX_ADMIN_SESSIONS = 100;
export const MAX_READ_SESSIONS = 1000;

type Role = 'admin' | 'read';

interface Session {
  role: Role;
  publicId: string;
  expiresAt: number;
}

export interface SecurityOptions {
  adminToken: string;
  /** When set, reads need it (or the admin token) on any host. */
  readToken: string | null;
  /** The address the HTTP port is bound to. */
  host: string;
  /** Epoch ms; tests move it to expire sessions. */
  now?: () => number;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The value of cookie `name` in a Cookie header, or null. */
export function cookieValue(header: string | null, name: string): string | null {
  if (header === null) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

export class Security implements SecurityFacade {
  readonly readsOpen: boolean;
  private readonly adminDigest: Buffer;
  private readonly readDigest: Buffer | null;
  private readonly now: () => number;
  /** Per role, keyed by the hex SHA-256 of the cookie value; Map order is creation order (oldest first). */
  private readonly sessions: Readonly<Record<Role, Map<string, Session>>> = { admin: new Map(), read: new Map() };
  private readonly limiter: SignInLimiter;
  private readonly failureAudits: AuditBudget;
  private readonly readSignInAudits: AuditBudget;

  constructor(options: SecurityOptions) {
    // An empty token would match an empty "Bearer " header: refuse to start rather than open up.
    if (options.adminToken.length === 0) throw new RangeError('the admin token must not be empty');
    if (options.readToken !== null && options.readToken.length === 0) throw new RangeError('the read token must not be empty (use null for none)');
    this.adminDigest = digest(options.adminToken);
    this.readDigest = options.readToken === null ? null : digest(options.readToken);
    this.readsOpen = isLoopbackHost(options.host) && options.readToken === null;
    this.now = options.now ?? Date.now;
    this.limiter = new SignInLimiter(this.now);
    this.failureAudits = new AuditBudget(this.now);
    this.readSignInAudits = new AuditBudget(this.now);
  }

  /**
   * An Authorization header, when present, decides alone: a wrong bearer token is anonymous
   * even next to a good cookie, so a script with a bad token fails loudly instead of riding on
   * a browser session.
   */
  identify(authorization: string | null, cookie: string | null): Principal {
    if (authorization !== null) {
      const match = /^Bearer +(\S+) *$/i.exec(authorization);
      const role = match?.[1] === undefined ? null : this.roleOf(match[1]);
      return role === null ? { kind: 'anonymous' } : { kind: 'bearer', role, name: role };
    }
    const session = this.liveSession(cookie);
    return session === null ? { kind: 'anonymous' } : { kind: 'session', role: session.role, name: session.publicId };
  }

  signIn(token: string): { cookieValue: string; role: Role; publicId: string; maxAgeSeconds: number } | null {
    const role = this.roleOf(token);
    if (role === null) return null;
    this.dropExpired();
    const pool = this.sessions[role];
    const max = role === 'admin' ? MAX_ADMIN_SESSIONS : MAX_READ_SESSIONS;
    while (pool.size >= max) {
      const oldest = pool.keys().next();
      if (oldest.done === true) break;
      pool.delete(oldest.value);
    }
    const value = randomBytes(32).toString('base64url');
    // Separate randomness: the public id shows in the audit log and must reveal nothing of the cookie.
    const publicId = randomBytes(4).toString('hex');
    pool.set(digest(value).toString('hex'), { role, publicId, expiresAt: this.now() + SESSION_MAX_AGE_SECONDS * 1000 });
    return { cookieValue: value, role, publicId, maxAgeSeconds: SESSION_MAX_AGE_SECONDS };
  }

  /** Sign-ins answered 429 since start (baton_console_sign_ins_throttled_total). */
  throttledSignIns = 0;

  admitSignIn(client: string): number | null {
    const retryAfter = this.limiter.admit(client);
    if (retryAfter !== null) this.throttledSignIns++;
    return retryAfter;
  }

  noteFailedSignIn(): boolean {
    return this.failureAudits.take();
  }

  auditSignIn(role: Role): boolean {
    return role === 'admin' || this.readSignInAudits.take();
  }

  signOut(cookie: string | null): void {
    const value = cookieValue(cookie, SESSION_COOKIE);
    if (value === null) return;
    const key = digest(value).toString('hex');
    this.sessions.admin.delete(key);
    this.sessions.read.delete(key);
  }

  /** Live sessions (for tests and a future admin view). */
  get sessionCount(): number {
    this.dropExpired();
    return this.sessions.admin.size + this.sessions.read.size;
  }

  private roleOf(token: string): Role | null {
    const d = digest(token);
    // Both comparisons always run, so timing does not tell which token a guess was near.
    const admin = timingSafeEqual(d, this.adminDigest);
    const read = this.readDigest !== null && timingSafeEqual(d, this.readDigest);
    return admin ? 'admin' : read ? 'read' : null;
  }

  private liveSession(cookie: string | null): Session | null {
    const value = cookieValue(cookie, SESSION_COOKIE);
    if (value === null || value.length === 0) return null;
    const key = digest(value).toString('hex');
    const pool = this.sessions.admin.has(key) ? this.sessions.admin : this.sessions.read;
    const session = pool.get(key);
    if (session === undefined) return null;
    if (session.expiresAt <= this.now()) {
      pool.delete(key);
      return null;
    }
    return session;
  }

  private dropExpired(): void {
    const now = this.now();
    // Creation order is expiry order (one fixed max age), so each scan stops at the first live one.
    for (const pool of [this.sessions.admin, this.sessions.read]) {
      for (const [key, session] of pool) {
        if (session.expiresAt > now) break;
        pool.delete(key);
      }
    }
  }
}
