/**
 * Pages a vault's credentials are used on, served on loopback: a login form, a one-time-code
 * form, a page that shows the cookies it was sent, and a WebAuthn sign-in that posts the
 * assertion back for the test to verify.
 */
import { createServer } from 'node:http';
import { listenLoopback } from './loopback.js';

export interface LoginSite {
  port: number;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** The same server under another origin: `http://localhost:<port>`. */
  otherOrigin: string;
  /** Cookie headers received, by path. */
  cookies: Map<string, string | undefined>;
  /** The last WebAuthn assertion posted back. */
  assertion: Record<string, string> | undefined;
  close(): Promise<void>;
}

const page = (body: string) => `<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`;

export async function startLoginSite(): Promise<LoginSite> {
  const site = { cookies: new Map<string, string | undefined>(), assertion: undefined } as LoginSite;
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    site.cookies.set(path, req.headers.cookie);
    const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html' }).end(page(body));
    if (path === '/login')
      return html(
        '<form><input name="username" type="text"><input name="password" type="password"><button>Sign in</button></form>',
      );
    if (path === '/otp') return html('<form><input name="code" autocomplete="one-time-code"></form>');
    if (path === '/cookie') return html(`<pre id="cookie">${req.headers.cookie ?? ''}</pre>`);
    if (path === '/webauthn') return html('<p>sign in with a passkey</p>');
    if (path === '/assertion' && req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c;
      });
      req.on('end', () => {
        site.assertion = JSON.parse(body) as Record<string, string>;
        res.writeHead(204).end();
      });
      return;
    }
    res.writeHead(404).end();
  });
  const loopback = await listenLoopback(server);
  site.port = loopback.port;
  site.origin = `http://127.0.0.1:${loopback.port}`;
  site.otherOrigin = `http://localhost:${loopback.port}`;
  site.close = loopback.close;
  return site;
}
