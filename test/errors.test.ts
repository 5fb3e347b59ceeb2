import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  CrawlerError,
  isCloudBrowserError,
  isCrawlerError,
  isRateLimitError,
  isServiceError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  ServiceError,
  UnprocessableEntityError,
} from '../packages/cloud-browser/src/index.js';

describe('ServiceError.generate', () => {
  it('reads every field of spec part 7', () => {
    const e = ServiceError.generate({
      message: 'proxy pool exhausted',
      code: 'ERR::PROXY::POOL_EXHAUSTED',
      http_status_code: 503,
      resource: 'PROXY',
      is_retryable: true,
      retry_delay: 5,
      retry_times: 2,
      documentation_url: 'https://docs.test/errors',
    });
    expect(e).toBeInstanceOf(ServerError);
    expect(e).toMatchObject({
      name: 'ServerError',
      code: 'ERR::PROXY::POOL_EXHAUSTED',
      http_status_code: 503,
      resource: 'PROXY',
      is_retryable: true,
      retry_delay: 5,
      retry_times: 2,
      documentation_url: 'https://docs.test/errors',
    });
    expect(e.message).toBe('ERR::PROXY::POOL_EXHAUSTED: proxy pool exhausted');
  });

  it('reads the {status: "error"} envelope of D13, mapping http_code', () => {
    const e = ServiceError.generate({
      status: 'error',
      http_code: 429,
      reason: 'Too Many Requests',
      error_id: 'e-1',
      message: 'slow down',
      code: 'ERR::THROTTLE::MAX_REQUEST_RATE_EXCEEDED',
    });
    expect(e).toBeInstanceOf(RateLimitError);
    expect(e).toMatchObject({
      http_status_code: 429,
      reason: 'Too Many Requests',
      error_id: 'e-1',
      is_retryable: false,
    });
  });

  it('defaults is_retryable to false and takes the delay from Retry-After', () => {
    const e = ServiceError.generate(
      { code: 'X', message: 'm' },
      { status: 429, headers: new Headers({ 'retry-after': '12' }) },
    );
    expect(e.is_retryable).toBe(false);
    expect(e.retry_delay).toBe(12);
  });

  it('prefers the body delay over Retry-After', () => {
    const e = ServiceError.generate(
      { code: 'X', message: 'm', retry_delay: 3 },
      { status: 429, headers: { 'Retry-After': '12' } },
    );
    expect(e.retry_delay).toBe(3);
  });

  it.each([
    [400, BadRequestError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, ConflictError],
    [422, UnprocessableEntityError],
    [429, RateLimitError],
    [500, ServerError],
    [502, ServerError],
    [418, ServiceError],
  ])('picks the subclass of HTTP %i', (status, Class) => {
    const e = ServiceError.generate({ code: 'ERR::X', message: 'm' }, { status });
    expect(e.constructor).toBe(Class);
    expect(e.name).toBe(Class.name);
    expect(e.stack?.split('\n')[0]).toBe(`${Class.name}: ERR::X: m`);
  });

  it.each([
    ['ERR::CRAWLER::REFRESH_IN_PROGRESS', 409, ConflictError],
    ['ERR::CRAWLER::SEARCH_NOT_READY', 409, ConflictError],
    ['ERR::CRAWLER::NOT_FOUND', 404, NotFoundError],
    ['ERR::CRAWLER::TOO_MANY_REQUESTS', 429, RateLimitError],
    ['ERR::CRAWLER::REFRESH_INTERVAL_INVALID', 400, BadRequestError],
    ['ERR::CRAWLER::SEARCH_FAILED', 503, ServerError],
  ] as const)('makes %s with status %i the class of its status, and still a crawler error', (code, status, Class) => {
    const e = ServiceError.generate({ code, message: 'no', http_status_code: status });
    expect(e).toBeInstanceOf(Class);
    expect(e.name).toBe(Class.name);
    expect(isCrawlerError(e)).toBe(true);
    expect(isServiceError(e)).toBe(true);
    expect(e.code).toBe(code);
    expect(e.http_status_code).toBe(status);
  });

  it('makes a crawler code whose status has no class of its own a CrawlerError', () => {
    const e = ServiceError.generate({ code: 'ERR::CRAWLER::SEARCH_NOT_ENABLED', message: 'no', http_status_code: 418 });
    expect(e).toBeInstanceOf(CrawlerError);
    expect(isCrawlerError(e)).toBe(true);
  });

  it('does not call an error of the browser or the API a crawler error', () => {
    for (const code of ['ERR::BROWSER::NOT_FOUND', 'ERR::API::NOT_FOUND']) {
      const e = ServiceError.generate({ code, message: 'no', http_status_code: 404 });
      expect([e instanceof NotFoundError, isCrawlerError(e)]).toEqual([true, false]);
    }
  });

  it('makes sense of a body that is not JSON', () => {
    const e = ServiceError.generate('<html>Bad Gateway</html>', { status: 502 });
    expect(e).toBeInstanceOf(ServerError);
    expect(e.code).toBe('HTTP_502');
    expect(e.message).toContain('Bad Gateway');
  });

  it('ignores fields of the wrong type instead of trusting them', () => {
    const e = ServiceError.generate(
      { code: 7, message: { x: 1 }, is_retryable: 'nope', retry_delay: 'soon' },
      { status: 500 },
    );
    expect(e).toMatchObject({ code: 'HTTP_500', is_retryable: false, retry_delay: undefined });
  });
});

describe('guards', () => {
  it('recognise errors by brand, not by class identity', () => {
    const e = ServiceError.generate({ code: 'X', message: 'm' }, { status: 429 });
    expect(isRateLimitError(e)).toBe(true);
    expect(isCloudBrowserError(e)).toBe(true);
    expect(isCrawlerError(e)).toBe(false);
    expect(isServiceError(new Error('x'))).toBe(false);
    expect(isServiceError({ code: 'X', http_status_code: 500 })).toBe(false);
    expect(isServiceError(null)).toBe(false);
  });
});
