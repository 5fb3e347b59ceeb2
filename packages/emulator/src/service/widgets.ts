/**
 * Test captchas for offline suites (README: Captchas): a checkbox, a slider and a press-and-hold
 * whose page scripts accept only a plausible human interaction (trusted events, a pointer that
 * travelled a curved way in many moves, a press of human length, a slide that wavers), as the
 * real widgets' checks would. Put `<div data-cloud-browser-captcha="checkbox"></div>` (or
 * `slider`, `hold`) in a page with the script; `data-callback` names a global function called
 * with the response token, which also lands in the hidden field `cb-captcha-response`.
 * The emulator serves them at `/emulator/captcha/widget.js` and `/emulator/captcha/<kind>`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The kinds of test widget. */
export const TEST_CAPTCHA_KINDS = ['checkbox', 'slider', 'hold'] as const;
export type TestCaptchaKind = (typeof TEST_CAPTCHA_KINDS)[number];

/** Milliseconds a `hold` widget must be pressed. */
export const TEST_CAPTCHA_HOLD_MS = 1500;

/** The widgets' script: finds each `[data-cloud-browser-captcha]` as it appears and draws it. */
export const TEST_CAPTCHA_SCRIPT = `(() => {
  if (window.__cloudBrowserTestCaptcha) return;
  window.__cloudBrowserTestCaptcha = true;
  const HOLD_MS = ${TEST_CAPTCHA_HOLD_MS};
  const moves = [];
  addEventListener('mousemove', (e) => { if (e.isTrusted) { moves.push([e.clientX, e.clientY, e.timeStamp]); if (moves.length > 400) moves.shift(); } }, true);
  /** Whether the last moves before now came as a person's: a dozen or more, on a curved way. */
  const humanApproach = (before) => {
    const recent = moves.filter((m) => m[2] <= before && before - m[2] < 3000);
    if (recent.length < 12) return 'the pointer jumped there (' + recent.length + ' moves)';
    const [a, b] = [recent[0], recent[recent.length - 1]];
    const len = Math.hypot(b[0] - a[0], b[1] - a[1]) || 1;
    const off = Math.max(...recent.map((m) => Math.abs((b[0] - a[0]) * (a[1] - m[1]) - (a[0] - m[0]) * (b[1] - a[1])) / len));
    return off < 1 && len > 40 ? 'the pointer moved in a straight line' : '';
  };
  const el = (tag, css, text) => { const e = document.createElement(tag); e.style.cssText = css; if (text) e.textContent = text; return e; };
  const init = (root) => {
    if (root.__cb) return;
    root.__cb = true;
    const kind = root.getAttribute('data-cloud-browser-captcha');
    root.setAttribute('data-state', 'waiting');
    root.style.cssText += ';display:inline-block;font:14px sans-serif;border:1px solid #ccc;border-radius:4px;padding:12px;background:#f9f9f9;user-select:none';
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = 'cb-captcha-response';
    const pass = () => {
      root.setAttribute('data-state', 'solved');
      root.removeAttribute('data-reason');
      input.value = 'cb-test.' + kind + '.' + Math.random().toString(36).slice(2);
      const cb = root.getAttribute('data-callback');
      if (cb && typeof window[cb] === 'function') window[cb](input.value);
    };
    const fail = (why) => { root.setAttribute('data-state', 'rejected'); root.setAttribute('data-reason', why); };
    if (kind === 'checkbox') {
      const box = el('span', 'display:inline-block;width:24px;height:24px;border:2px solid #555;border-radius:3px;vertical-align:middle;margin-right:8px;background:#fff;cursor:pointer');
      box.className = 'cb-captcha-target';
      root.append(box, el('span', '', 'I am human'), input);
      let down = 0;
      box.addEventListener('mousedown', (e) => { down = e.timeStamp; });
      box.addEventListener('mouseup', (e) => {
        if (!e.isTrusted) return fail('the click was not trusted');
        const held = e.timeStamp - down;
        if (held < 20 || held > 3000) return fail('the press lasted ' + Math.round(held) + ' ms');
        const why = humanApproach(down);
        if (why) return fail(why);
        box.style.background = '#2a2';
        pass();
      });
    } else if (kind === 'slider') {
      const track = el('div', 'position:relative;width:300px;height:40px;background:#ddd;border-radius:20px');
      const handle = el('div', 'position:absolute;left:0;top:0;width:40px;height:40px;background:#36c;border-radius:20px;cursor:grab');
      handle.className = 'cb-captcha-target';
      track.className = 'cb-captcha-track';
      track.append(handle);
      root.append(el('div', 'margin-bottom:6px', 'Slide to the end'), track, input);
      let start;
      const ys = [];
      handle.addEventListener('mousedown', (e) => { if (e.isTrusted) { start = { x: e.clientX, t: e.timeStamp, why: humanApproach(e.timeStamp) }; ys.length = 0; } });
      addEventListener('mousemove', (e) => {
        if (!start) return;
        ys.push(e.clientY);
        handle.style.left = Math.max(0, Math.min(260, e.clientX - start.x)) + 'px';
      }, true);
      addEventListener('mouseup', (e) => {
        if (!start) return;
        const s = start;
        start = undefined;
        const at = parseFloat(handle.style.left) || 0;
        const why = s.why || (at < 250 ? 'the slide stopped short (' + Math.round(at) + ' of 260 px)'
          : ys.length < 10 ? 'the slide was a jump (' + ys.length + ' moves)'
          : new Set(ys.map(Math.round)).size < 2 ? 'the slide was perfectly straight'
          : e.timeStamp - s.t < 200 ? 'the slide was too quick' : '');
        if (why) { handle.style.left = '0px'; return fail(why); }
        pass();
      }, true);
    } else if (kind === 'hold') {
      const button = el('button', 'padding:10px 18px;font:inherit;cursor:pointer', 'Press and hold');
      button.type = 'button';
      button.className = 'cb-captcha-target';
      root.append(button, input);
      let down;
      button.addEventListener('mousedown', (e) => { if (e.isTrusted) down = { t: e.timeStamp, why: humanApproach(e.timeStamp) }; });
      button.addEventListener('mouseup', (e) => {
        if (!down) return;
        const held = e.timeStamp - down.t;
        const why = down.why || (held < HOLD_MS ? 'released after ' + Math.round(held) + ' ms, before ' + HOLD_MS : '');
        down = undefined;
        if (why) return fail(why);
        button.textContent = 'Done';
        pass();
      });
    }
  };
  const scan = () => document.querySelectorAll('[data-cloud-browser-captcha]').forEach(init);
  if (document.readyState === 'loading') addEventListener('DOMContentLoaded', scan); else scan();
  new MutationObserver(scan).observe(document.documentElement, { childList: true, subtree: true });
})();
`;

/**
 * A page with one test widget, for a user's own local site or the emulator's.
 *
 * @example
 * testCaptchaPage('slider') // '<!doctype html>…<div data-cloud-browser-captcha="slider"…'
 */
export function testCaptchaPage(kind: TestCaptchaKind, callback = 'onCaptcha'): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Test captcha: ${kind}</title></head><body>
<form id="form"><div data-cloud-browser-captcha="${kind}" data-callback="${callback}"></div></form>
<p id="result"></p>
<script>window.${callback} = (token) => { document.getElementById('result').textContent = 'solved: ' + token; };</script>
<script>${TEST_CAPTCHA_SCRIPT}</script>
</body></html>`;
}

/** `GET /emulator/captcha/widget.js` and `/emulator/captcha/<kind>`: open, nothing in them is secret. */
export function serveTestCaptchas(req: IncomingMessage, res: ServerResponse): boolean {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (!path.startsWith('/emulator/captcha/') || req.method !== 'GET') return false;
  const name = path.slice('/emulator/captcha/'.length);
  const kind = TEST_CAPTCHA_KINDS.find((k) => k === name);
  if (name === 'widget.js') {
    res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(TEST_CAPTCHA_SCRIPT);
  } else if (kind) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(testCaptchaPage(kind));
  } else {
    res
      .writeHead(404, { 'content-type': 'text/plain' })
      .end(`no test captcha ${name}: one of ${TEST_CAPTCHA_KINDS.join(', ')}`);
  }
  return true;
}
