// The console's route files (app/**/route.ts) and the console-less server's table must list the
// same routes, methods and handlers: this reads the app directory and compares.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { API_ROUTES, CONSOLE_PAGES, matchRoute } from './api-routes.ts';

const APP = fileURLToPath(new URL('../../app', import.meta.url));

function routeFiles(dir: string, name = 'route.ts'): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return routeFiles(path, name);
    return e.name === name ? [path] : [];
  });
}

/** pattern → method → the handler function's name, as the route file wires it (`export const GET = withDaemon(getCluster)`). */
function appRoutes(): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const file of routeFiles(APP)) {
    const dir = relative(APP, file).split(sep).slice(0, -1);
    const methods: Record<string, string> = {};
    for (const m of readFileSync(file, 'utf8').matchAll(/^export const (GET|POST|DELETE) = withDaemon(?:<[^>]*>)?\((\w+)\);$/gm)) {
      methods[m[1] as string] = m[2] as string;
    }
    out.set(`/${dir.join('/')}`, methods);
  }
  return out;
}

function tableRoutes(): Map<string, Record<string, string>> {
  return new Map(API_ROUTES.map((r) => [r.pattern, Object.fromEntries(Object.entries(r.handlers).map(([m, h]) => [m, h.name]))]));
}

describe('the route table', () => {
  it('has an entry for every route file under app/ with the same methods and handlers, and no other', () => {
    const app = appRoutes();
    expect(app.size).toBeGreaterThanOrEqual(14);
    expect(app.has('/api/v1/cluster/restore')).toBe(true);
    expect(Object.fromEntries(tableRoutes())).toEqual(Object.fromEntries(app));
  });

  it('lists every page of the console, for the answer the console-less server gives them', () => {
    const pages = routeFiles(APP, 'page.tsx').map((file) => `/${relative(APP, file).split(sep).slice(0, -1).join('/')}`);
    expect([...CONSOLE_PAGES].sort()).toEqual(pages.sort());
  });

  it('matches literal paths and decodes parameters as Next does', () => {
    const kick = matchRoute('/api/v1/locks/a%2Fb%20c/waiters/42/kick');
    expect(kick).toMatchObject({ kind: 'found', route: { pattern: '/api/v1/locks/[name]/waiters/[id]/kick' }, params: { name: 'a/b c', id: '42' } });
    expect(matchRoute('/api/v1/locks')).toMatchObject({ kind: 'found', params: {} });
    expect(matchRoute('/api/v1/locks/x')).toMatchObject({ kind: 'found', route: { pattern: '/api/v1/locks/[name]' }, params: { name: 'x' } });
  });

  it('finds nothing for unknown paths, empty parameters or trailing slashes', () => {
    for (const path of ['/', '/nope', '/api/v1/locks/', '/api/v1/locks//force-release', '/api/v1/cluster/restore/x', '/healthz/']) {
      expect(matchRoute(path), path).toEqual({ kind: 'not-found' });
    }
  });

  it('tells a parameter that does not URL-decode apart', () => {
    expect(matchRoute('/api/v1/locks/%zz')).toEqual({ kind: 'bad-path' });
  });
});
