/**
 * A session's vault credentials put to use through CDP (docs/decisions.md D21), for matching origins only:
 * cookies set before the first page, passwords and one-time codes filled into the forms of
 * their origin when a page loads, passkeys registered with a WebAuthn virtual authenticator.
 */
import type { CdpClient } from '../cdp.js';
import { base32Decode, totp } from './totp.js';
import type { OpenedItem } from './vaults.js';

// Set like a person typing would: the framework's listeners see `input` and `change`.
const FILL = `(({ username, password, code }) => {
  const set = (el, v) => {
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(el, v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  };
  let filled = 0;
  if (password !== undefined) {
    const pw = document.querySelector('input[type=password]');
    if (pw) {
      const scope = pw.form ?? document;
      const user = scope.querySelector('input[autocomplete~=username], input[type=email], input[name*=user i], input[name*=login i], input[type=text]');
      if (user && username) { set(user, username); filled++; }
      set(pw, password);
      filled++;
    }
  }
  if (code !== undefined) {
    const otp = document.querySelector('input[autocomplete=one-time-code]');
    if (otp) { set(otp, code); filled++; }
  }
  return filled;
})`;

const b64 = (text: string) => {
  const std = text.replace(/-/g, '+').replace(/_/g, '/');
  return std + '='.repeat((4 - (std.length % 4)) % 4);
};

/** Injects one session's credentials. */
export class CredentialInjector {
  constructor(
    private readonly control: CdpClient,
    private readonly items: readonly OpenedItem[],
    private readonly now: () => number = Date.now,
  ) {}

  get empty(): boolean {
    return this.items.length === 0;
  }

  /** Cookie items, set browser-wide before any page loads. */
  async beforeFirstPage(): Promise<void> {
    const cookies = this.items
      .filter((i) => i.type === 'cookie')
      .map((i) => {
        const s = i.secret as {
          name: string;
          value: string;
          domain?: string;
          path?: string;
          secure?: boolean;
          httpOnly?: boolean;
          sameSite?: string;
          expires?: number;
        };
        const origin = new URL(i.origin);
        return {
          name: s.name,
          value: s.value,
          ...(s.domain ? { domain: s.domain } : { url: origin.origin }),
          path: s.path ?? '/',
          ...(s.secure !== undefined ? { secure: s.secure } : {}),
          ...(s.httpOnly !== undefined ? { httpOnly: s.httpOnly } : {}),
          ...(s.sameSite ? { sameSite: s.sameSite } : {}),
          ...(s.expires !== undefined ? { expires: s.expires } : {}),
        };
      });
    if (cookies.length > 0) await this.control.send('Storage.setCookies', { cookies });
  }

  /** For a new page: passkeys in a virtual authenticator, and forms filled as pages load. */
  async onPage(sessionId: string): Promise<void> {
    const passkeys = this.items.filter((i) => i.type === 'passkey');
    if (passkeys.length > 0) {
      await this.control.send('WebAuthn.enable', { enableUI: false }, sessionId);
      const { authenticatorId } = await this.control.send<{ authenticatorId: string }>(
        'WebAuthn.addVirtualAuthenticator',
        {
          options: {
            protocol: 'ctap2',
            transport: 'internal',
            hasResidentKey: true,
            hasUserVerification: true,
            isUserVerified: true,
            automaticPresenceSimulation: true,
          },
        },
        sessionId,
      );
      for (const item of passkeys) {
        const s = item.secret as { credentialId: string; privateKey: string; userHandle?: string; signCount?: number };
        await this.control.send(
          'WebAuthn.addCredential',
          {
            authenticatorId,
            credential: {
              credentialId: b64(s.credentialId),
              isResidentCredential: s.userHandle !== undefined,
              rpId: new URL(item.origin).hostname,
              privateKey: b64(s.privateKey),
              ...(s.userHandle !== undefined ? { userHandle: b64(s.userHandle) } : {}),
              signCount: s.signCount ?? 0,
            },
          },
          sessionId,
        );
      }
    }
    if (this.items.some((i) => i.type === 'password' || i.type === 'totp')) {
      await this.control.send('Page.enable', {}, sessionId);
      this.control.on('Page.loadEventFired', (_params, sid) => {
        if (sid === sessionId) void this.fill(sessionId).catch(() => {});
      });
    }
  }

  /** Fill the page's forms with the items of its origin, and only those. */
  private async fill(sessionId: string): Promise<void> {
    const { result } = await this.control.send<{ result: { value?: unknown } }>(
      'Runtime.evaluate',
      { expression: 'location.origin', returnByValue: true },
      sessionId,
    );
    const origin = result.value;
    for (const item of this.items) {
      if (item.origin !== origin) continue;
      let args: Record<string, unknown> | undefined;
      if (item.type === 'password') {
        args = { username: item.username ?? undefined, password: (item.secret as { password: string }).password };
      } else if (item.type === 'totp') {
        const s = item.secret as {
          secret: string;
          digits?: number;
          period?: number;
          algorithm?: 'SHA1' | 'SHA256' | 'SHA512';
        };
        args = { code: totp(base32Decode(s.secret), this.now(), s) };
      }
      if (!args) continue;
      await this.control.send(
        'Runtime.evaluate',
        { expression: `(${FILL})(${JSON.stringify(args)})`, returnByValue: true },
        sessionId,
      );
    }
  }
}
