/**
 * The dashboard's page: plain HTML, CSS and a little JavaScript, served as they are (no build
 * step, no framework). The live view is a small RFB client of its own: it reads the emulator's
 * Tight JPEG updates onto a canvas and sends pointer and key events back.
 */

const STYLE = `
body { font: 14px system-ui, sans-serif; margin: 0; background: #f5f6f8; color: #1d2330; }
header { background: #1d2330; color: #fff; padding: 12px 20px; font-weight: 600; }
main { padding: 16px 20px; display: grid; gap: 18px; }
section { background: #fff; border-radius: 8px; padding: 12px 16px; box-shadow: 0 1px 2px #0002; }
h2 { font-size: 15px; margin: 0 0 10px; }
table { border-collapse: collapse; width: 100%; }
td, th { text-align: left; padding: 6px 8px; border-top: 1px solid #e4e7ec; vertical-align: top; }
th { color: #667; font-weight: 500; border-top: 0; }
code { font: 12px ui-monospace, monospace; }
.thumb { width: 192px; height: 108px; object-fit: contain; background: #ddd; border-radius: 4px; }
.bar { width: 160px; height: 10px; background: #e4e7ec; border-radius: 5px; overflow: hidden; display: inline-block; }
.bar > span { display: block; height: 100%; background: #3b82f6; }
.empty { color: #889; }
#view { display: none; }
#view.open { display: block; }
#screen { border: 1px solid #ccd; max-width: 100%; cursor: crosshair; outline: none; }
button { font: inherit; padding: 3px 10px; }
.accepted { color: #15803d; } .refused { color: #b91c1c; }
`;

// The live view: RFB 3.8 with security None over the dashboard's own socket (the cookie lets
// it in), Tight JPEG and DesktopSize pictures, pointer and key events.
const VIEWER = `
const KEYSYMS = { Enter: 0xff0d, Backspace: 0xff08, Tab: 0xff09, Escape: 0xff1b, Delete: 0xffff, Home: 0xff50,
  End: 0xff57, PageUp: 0xff55, PageDown: 0xff56, ArrowLeft: 0xff51, ArrowUp: 0xff52, ArrowRight: 0xff53,
  ArrowDown: 0xff54, Shift: 0xffe1, Control: 0xffe3, Alt: 0xffe9, Meta: 0xffe7 };
let viewer = null;
function openView(runId) {
  if (viewer) viewer.close();
  const canvas = document.getElementById('screen');
  const g = canvas.getContext('2d');
  document.getElementById('view').classList.add('open');
  document.getElementById('view-title').textContent = runId;
  const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/emulator/dashboard/view/' + encodeURIComponent(runId));
  ws.binaryType = 'arraybuffer';
  let buf = new Uint8Array(0);
  let state = 'version';
  const send = (bytes) => { if (ws.readyState === 1) ws.send(new Uint8Array(bytes)); };
  const u16 = (b, o) => (b[o] << 8) | b[o + 1];
  const u32 = (b, o) => ((b[o] << 24) >>> 0) + (b[o + 1] << 16) + (b[o + 2] << 8) + b[o + 3];
  const take = (n) => { const out = buf.slice(0, n); buf = buf.slice(n); return out; };
  const request = (incremental) => send([3, incremental, 0, 0, 0, 0, canvas.width >> 8, canvas.width & 255, canvas.height >> 8, canvas.height & 255]);
  let drawing = Promise.resolve();
  function update() {
    if (buf.length < 4) return false;
    const count = u16(buf, 2);
    let p = 4;
    const pictures = [];
    for (let i = 0; i < count; i++) {
      if (buf.length < p + 12) return false;
      const w = u16(buf, p + 4), h = u16(buf, p + 6), enc = u32(buf, p + 8) | 0;
      p += 12;
      if (enc === -223) { pictures.push({ resize: [w, h] }); continue; }
      if (buf.length < p + 1) return false;
      p += 1;
      let length = 0;
      for (let shift = 0; ; shift += 7) {
        if (buf.length < p + 1) return false;
        const b = buf[p++];
        length |= (b & 0x7f) << shift;
        if (!(b & 0x80)) break;
      }
      if (buf.length < p + length) return false;
      pictures.push({ jpeg: buf.slice(p, p + length) });
      p += length;
    }
    take(p);
    for (const picture of pictures) {
      drawing = drawing.then(async () => {
        if (picture.resize) { canvas.width = picture.resize[0]; canvas.height = picture.resize[1]; return; }
        const bitmap = await createImageBitmap(new Blob([picture.jpeg], { type: 'image/jpeg' }));
        g.drawImage(bitmap, 0, 0);
        canvas.dataset.frames = String(Number(canvas.dataset.frames || 0) + 1);
      });
    }
    drawing.then(() => request(1));
    return true;
  }
  function step() {
    if (state === 'version') {
      if (buf.length < 12) return false;
      take(12);
      send(Array.from('RFB 003.008\\n', (c) => c.charCodeAt(0)));
      state = 'types';
      return true;
    }
    if (state === 'types') {
      if (buf.length < 1 || buf.length < 1 + buf[0]) return false;
      const types = take(1 + buf[0]).slice(1);
      if (!types.includes(1)) { ws.close(); return false; }
      send([1]);
      state = 'result';
      return true;
    }
    if (state === 'result') {
      if (buf.length < 4) return false;
      if (u32(take(4), 0) !== 0) { ws.close(); return false; }
      send([1]);
      state = 'init';
      return true;
    }
    if (state === 'init') {
      if (buf.length < 24 || buf.length < 24 + u32(buf, 20)) return false;
      const init = take(24 + u32(buf, 20));
      canvas.width = u16(init, 0);
      canvas.height = u16(init, 2);
      send([2, 0, 0, 2, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0x21]);
      request(0);
      state = 'normal';
      return true;
    }
    if (buf[0] !== 0) { ws.close(); return false; }
    return update();
  }
  ws.onmessage = (e) => {
    const data = new Uint8Array(e.data);
    const joined = new Uint8Array(buf.length + data.length);
    joined.set(buf);
    joined.set(data, buf.length);
    buf = joined;
    while (buf.length > 0 && step()) {}
  };
  let mask = 0;
  const point = (e) => {
    const r = canvas.getBoundingClientRect();
    const x = Math.max(0, Math.min(canvas.width - 1, Math.round((e.clientX - r.left) * canvas.width / r.width)));
    const y = Math.max(0, Math.min(canvas.height - 1, Math.round((e.clientY - r.top) * canvas.height / r.height)));
    send([5, mask, x >> 8, x & 255, y >> 8, y & 255]);
  };
  const bit = (e) => [1, 2, 4][e.button] || 0;
  canvas.onmousedown = (e) => { canvas.focus(); mask |= bit(e); point(e); e.preventDefault(); };
  canvas.onmouseup = (e) => { mask &= ~bit(e); point(e); };
  canvas.onmousemove = (e) => point(e);
  canvas.oncontextmenu = (e) => e.preventDefault();
  canvas.onwheel = (e) => { const b = e.deltaY < 0 ? 8 : 16; mask |= b; point(e); mask &= ~b; point(e); e.preventDefault(); };
  const key = (down) => (e) => {
    const cp = e.key.length === 1 || (e.key.length === 2 && e.key.codePointAt(0) > 0xffff) ? e.key.codePointAt(0) : undefined;
    const keysym = KEYSYMS[e.key] ?? (cp === undefined ? undefined : cp < 0x100 ? cp : 0x1000000 + cp);
    if (keysym === undefined) return;
    send([4, down ? 1 : 0, 0, 0, keysym >>> 24, (keysym >> 16) & 255, (keysym >> 8) & 255, keysym & 255]);
    e.preventDefault();
  };
  canvas.onkeydown = key(true);
  canvas.onkeyup = key(false);
  viewer = { runId, close: () => ws.close() };
  ws.onclose = () => { if (viewer && viewer.runId === runId) document.getElementById('view-title').textContent = runId + ' (ended)'; };
}
function closeView() {
  if (viewer) viewer.close();
  viewer = null;
  document.getElementById('view').classList.remove('open');
}
`;

const RENDER = `
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => '&#' + c.charCodeAt(0) + ';');
const shown = new Set();
function row(cells) { return '<tr>' + cells.map((c) => '<td>' + c + '</td>').join('') + '</tr>'; }
function table(id, head, rows, empty) {
  document.getElementById(id).innerHTML = rows.length
    ? '<table><tr>' + head.map((h) => '<th>' + h + '</th>').join('') + '</tr>' + rows.join('') + '</table>'
    : '<p class="empty">' + empty + '</p>';
}
let thumbs = 0;
async function refresh() {
  const res = await fetch('/emulator/dashboard/state', { cache: 'no-store' });
  if (!res.ok) return;
  const state = await res.json();
  const tick = Math.floor(Date.now() / 3000);
  table('sessions', ['Run', 'Name', 'Age', 'Options', 'Page', ''], state.sessions.map((s) => row([
    '<code>' + esc(s.run_id) + '</code>', esc(s.session ?? '-'), esc(s.age_seconds) + ' s',
    '<code>' + esc(JSON.stringify(s.options)) + '</code>',
    '<img class="thumb" alt="" src="/emulator/dashboard/thumbnail/' + encodeURIComponent(s.run_id) + '?t=' + tick + '">',
    '<button data-view="' + esc(s.run_id) + '">Live view</button>',
  ])), 'No live session. Connect Playwright or Puppeteer to the browser URL.');
  const recordingRows = state.recordings.map((r) => row([
    '<code>' + esc(r.run_id) + '</code>', esc(r.status),
    r.metadata ? esc(r.metadata.width + 'x' + r.metadata.height + ', ' + (r.metadata.duration_ms / 1000).toFixed(1) + ' s') : '',
    r.status === 'ready' ? '<video controls muted preload="metadata" data-run="' + esc(r.run_id) + '" src="/emulator/dashboard/video/' + encodeURIComponent(r.run_id) + '" width="320"></video>' : '',
  ]));
  // Keep players that are already on the page: rebuilding them would stop them.
  const key = JSON.stringify(state.recordings.map((r) => [r.run_id, r.status]));
  if (key !== document.getElementById('recordings').dataset.key) {
    document.getElementById('recordings').dataset.key = key;
    table('recordings', ['Run', 'Recording', 'Size', 'Video'], recordingRows, 'No finished debug run yet. Open a session with debug: true.');
  }
  table('crawls', ['Crawl', 'Start', 'Status', 'Progress', 'Pages'], state.crawls.map((c) => row([
    '<code>' + esc(c.uuid) + '</code>', esc(c.url), esc(c.status),
    '<span class="bar"><span style="width:' + c.progress + '%"></span></span> <span class="progress">' + c.progress + ' %</span>',
    esc(c.visited + ' visited, ' + c.failed + ' failed, ' + c.skipped + ' skipped') +
      '<details><summary>pages</summary>' + c.pages.map((p) => '<div><code>' + esc(p.status) + '</code> ' + esc(p.url) + '</div>').join('') + '</details>',
  ])), 'No crawl yet.');
  table('deliveries', ['Webhook', 'Event', 'Crawl', 'Answer', 'Verdict'], state.deliveries.map((d) => row([
    esc(d.webhook), esc(d.event), '<code>' + esc(d.crawl ?? '') + '</code>', esc(d.status) + ' after ' + esc(d.attempts),
    '<span class="' + esc(d.verdict) + '">' + esc(d.verdict) + '</span>',
  ])), 'No webhook delivery yet.');
  document.body.dataset.refreshed = String(++thumbs);
  const wanted = new URLSearchParams(location.search).get('view');
  if (wanted && !shown.has(wanted) && state.sessions.some((s) => s.run_id === wanted)) { shown.add(wanted); openView(wanted); }
}
document.addEventListener('click', (e) => {
  const id = e.target.closest && e.target.closest('[data-view]')?.dataset.view;
  if (id) openView(id);
});
refresh();
setInterval(refresh, 2000);
`;

/** The dashboard. */
export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cloud-browser emulator</title><style>${STYLE}</style></head>
<body>
<header>cloud-browser emulator</header>
<main>
<section id="view"><h2>Live view: <code id="view-title"></code> <button onclick="closeView()">Close</button></h2>
<canvas id="screen" tabindex="0" width="800" height="450"></canvas></section>
<section><h2>Live sessions</h2><div id="sessions"></div></section>
<section><h2>Recordings</h2><div id="recordings"></div></section>
<section><h2>Crawls</h2><div id="crawls"></div></section>
<section><h2>Webhook deliveries</h2><div id="deliveries"></div></section>
</main>
<script>${VIEWER}${RENDER}</script>
</body></html>`;

/** Asked for when there is no dashboard cookie yet. */
export const SIGN_IN_PAGE = (problem = '') => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cloud-browser emulator</title><style>${STYLE}</style></head>
<body><header>cloud-browser emulator</header><main><section>
<h2>Sign in</h2>
<p>${problem ? `<b>${problem}</b> ` : ''}Open the address <code>cloud-browser emulator</code> printed, or give the emulator's key:</p>
<form method="get" action="/"><input type="password" name="key" autocomplete="off" size="40"> <button>Open</button>
<input type="hidden" name="view" value=""></form>
<script>const v = new URLSearchParams(location.search).get('view'); const f = document.querySelector('[name=view]'); if (v) f.value = v; else f.remove();</script>
</section></main></body></html>`;
