import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isConfigError, projectSalt, vncCredentials } from '../../packages/cloud-browser/src/index.js';

describe('projectSalt', () => {
  it('holds the test vector of D4', () => {
    expect(projectSalt('scp-test-0000000000000000000000000000000000')).toBe('701018da');
  });

  it('is the first 8 hex characters of SHA-256 of the key, for any key', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1 }), (key) => {
        expect(projectSalt(key)).toBe(createHash('sha256').update(key).digest('hex').slice(0, 8));
      }),
    );
  });
});

describe('vncCredentials', () => {
  const input = {
    browserUrl: 'wss://browser.test:8443/path?api_key=k',
    runId: 'run-42',
    salt: '701018da',
    vncPassword: 'hunter22',
  };

  it('gives the native client URL on port 5901 with the salted password', () => {
    const vnc = vncCredentials(input);
    expect(vnc.tcp).toEqual({ url: 'vnc://run-42@browser.test:5901', password: '701018da-hunter22' });
  });

  it('gives the WebSocket view on the browser origin with the raw password', () => {
    const vnc = vncCredentials(input);
    expect(vnc.websocket).toEqual({ url: 'wss://browser.test:8443/run/run-42/vnc', password: 'hunter22' });
    expect(vncCredentials({ ...input, browserUrl: 'ws://127.0.0.1:9222' }).websocket.url).toBe(
      'ws://127.0.0.1:9222/run/run-42/vnc',
    );
  });

  it('names another native port when the service gives one (the emulator when 5901 was taken)', () => {
    expect(vncCredentials({ ...input, tcpPort: 40123 }).tcp.url).toBe('vnc://run-42@browser.test:40123');
  });

  it('keeps IPv6 hosts in brackets', () => {
    expect(vncCredentials({ ...input, browserUrl: 'ws://[::1]:9' }).tcp.url).toBe('vnc://run-42@[::1]:5901');
  });

  it('hides the passwords from util.inspect', () => {
    const printed = inspect(vncCredentials(input), { depth: 5 });
    expect(printed).toContain('vnc://run-42@browser.test:5901');
    expect(printed).not.toContain('hunter22');
  });

  it.each([
    ['browserUrl', { browserUrl: 'https://browser.test' }],
    ['runId', { runId: '../etc' }],
    ['salt', { salt: 'XYZ' }],
    ['vncPassword', { vncPassword: '' }],
    ['tcpPort', { tcpPort: 0 }],
    ['tcpPort', { tcpPort: Number.NaN }],
    ['tcpPort', { tcpPort: 65536 }],
  ])('refuses a bad %s', (option, patch) => {
    try {
      vncCredentials({ ...input, ...patch });
      expect.unreachable();
    } catch (e) {
      expect(isConfigError(e) && e.issues.map((i) => i.option)).toEqual([option]);
    }
  });
});
