import { describe, expect, it } from 'vitest';
import { apiRequest } from '../ops-facade/testing/test-facade.ts';
import { originVerdict, otherMethods } from './route-kit.ts';

describe('otherMethods', () => {
  it('answers a method the route does not support with 405 JSON and an Allow header', async () => {
    const { POST } = otherMethods('GET');
    const res = POST(apiRequest('/api/v1/locks', { method: 'POST' }));
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ error: { code: 'method-not-allowed', message: 'method not allowed: POST /api/v1/locks; allowed: GET, HEAD, OPTIONS' } });
  });

  it('lists only the methods a POST route supports', () => {
    const { GET } = otherMethods('POST');
    expect(GET(apiRequest('/x')).headers.get('allow')).toBe('POST, OPTIONS');
  });

  it('answers OPTIONS with 204 and the same Allow header', () => {
    const { OPTIONS } = otherMethods('GET', 'POST', 'DELETE');
    const res = OPTIONS(apiRequest('/x', { method: 'OPTIONS' }));
    expect(res.status).toBe(204);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST, DELETE, OPTIONS');
  });
});

describe('originVerdict', () => {
  const withOrigin = (origin: string | null, host = '127.0.0.1:3000') =>
    originVerdict(apiRequest('/x', { headers: { host, ...(origin === null ? {} : { origin }) } }));

  it('is absent without an Origin header', () => {
    expect(withOrigin(null)).toBe('absent');
  });

  it('is same when the Origin names the Host the request was sent to', () => {
    expect(withOrigin('http://127.0.0.1:3000')).toBe('same');
  });

  it('treats a default port in the Host header as the same origin', () => {
    expect(withOrigin('http://Console.example', 'console.example:80')).toBe('same');
  });

  it('is foreign for another host or port', () => {
    expect(withOrigin('http://evil.example')).toBe('foreign');
    expect(withOrigin('http://127.0.0.1:3001')).toBe('foreign');
  });

  it('is foreign for another scheme at the same host and port, either way', () => {
    expect(withOrigin('https://127.0.0.1:3000')).toBe('foreign');
    expect(withOrigin('ftp://127.0.0.1:3000')).toBe('foreign');
    const overTls = new Request('https://console.example/x', { headers: { host: 'console.example', origin: 'http://console.example' } });
    expect(originVerdict(overTls)).toBe('foreign');
    const sameOverTls = new Request('https://console.example/x', { headers: { host: 'console.example', origin: 'https://console.example' } });
    expect(originVerdict(sameOverTls)).toBe('same');
  });

  it('is foreign for an opaque "null" origin', () => {
    expect(withOrigin('null')).toBe('foreign');
  });

  it('judges by the Host header, not the URL the server rebuilt', () => {
    const req = new Request('http://0.0.0.0:3000/x', { headers: { host: 'console.example:3000', origin: 'http://console.example:3000' } });
    expect(originVerdict(req)).toBe('same');
  });
});
