import { afterEach, describe, expect, it } from 'vitest';
import { clearSignInRequest, noteActionOpened, requestSignIn, requestSignInAgain, resumeSignInRequest } from './sign-in-request.ts';

// The store is module state: each test starts from no request.
afterEach(() => clearSignInRequest());

describe('the sign-in request and the action it resumes', () => {
  it('runs the action that asked for the sign-in once, after a sign-in as admin', () => {
    const opened: string[] = [];
    requestSignIn('Sign in as admin to force-release jobs.', () => opened.push('force-release jobs'));
    expect(opened).toEqual([]);
    resumeSignInRequest();
    expect(opened).toEqual(['force-release jobs']);
    resumeSignInRequest();
    expect(opened).toEqual(['force-release jobs']);
  });

  it('resumes only the newest press', () => {
    const opened: string[] = [];
    requestSignIn('first', () => opened.push('first'));
    requestSignIn('second', () => opened.push('second'));
    resumeSignInRequest();
    expect(opened).toEqual(['second']);
  });

  it('a press without an action to resume, or a cleared request, resumes nothing', () => {
    const opened: string[] = [];
    requestSignIn('first', () => opened.push('first'));
    requestSignIn('a reason alone');
    resumeSignInRequest();
    requestSignIn('cleared', () => opened.push('cleared'));
    clearSignInRequest();
    resumeSignInRequest();
    expect(opened).toEqual([]);
  });

  it('after a 401 asks again for the action whose confirm opened last, and reopens it after the sign-in', () => {
    const opened: string[] = [];
    noteActionOpened('kick waiter 3 from jobs', () => opened.push('kick 3'));
    noteActionOpened('force-release jobs', () => opened.push('force-release jobs'));
    requestSignInAgain();
    resumeSignInRequest();
    expect(opened).toEqual(['force-release jobs']);
  });
});
