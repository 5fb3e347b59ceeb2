/** The emulated crawler's pure rules: robots.txt (RFC 9309), page directives, URL normalisation, body types and encodings. */
import { describe, expect, it } from 'vitest';
import { bodyType, decodeText, detectEncoding } from '../../packages/emulator/src/crawler/decode.js';
import { pageDirectives, parseRobotsTxt, productToken } from '../../packages/emulator/src/crawler/robots.js';
import { normaliseUrl } from '../../packages/emulator/src/crawler/urls.js';

const ROBOTS = [
  'User-agent: FooBot',
  'User-agent: BarBot',
  'Disallow: /shared-bots/',
  '',
  'User-agent: *',
  'Disallow: /private',
  'Allow: /private/open',
  'Disallow: /*.pdf$',
  'Disallow: /*?session=',
  'Allow: /page$',
  'Disallow: /page',
  'Disallow: /%7Etilde',
  '',
  'User-agent: foobot',
  'Disallow: /foo-only',
  'Sitemap: http://127.0.0.1/sitemap.xml',
].join('\n');

describe('robots.txt (RFC 9309)', () => {
  const star = parseRobotsTxt('http://127.0.0.1/robots.txt', ROBOTS, '*');
  const foo = parseRobotsTxt('http://127.0.0.1/robots.txt', ROBOTS, productToken('FooBot/2.1 (+http://x)'));
  const allowed = (rules: typeof star, path: string) => rules.allowed(new URL(path, 'http://127.0.0.1'));

  it.each([
    ['/private', false],
    ['/private/x', false],
    ['/private/open', true],
    ['/private/open/more', true],
    ['/doc.pdf', false],
    ['/doc.pdf?x=1', true],
    ['/a/b/c.pdf', false],
    ['/list?session=1', false],
    ['/list?page=2', true],
    ['/page', true],
    ['/page/2', false],
    ['/~tilde', false],
    ['/%7etilde', false],
    ['/shared-bots/', true],
    ['/robots.txt', true],
  ])('for *, %s is allowed: %s', (path, expected) => {
    expect(allowed(star, path)).toBe(expected);
  });

  it('groups several user agents, merges groups of the same agent, and ignores * for a named agent', () => {
    expect(allowed(foo, '/shared-bots/x')).toBe(false);
    expect(allowed(foo, '/foo-only')).toBe(false);
    expect(allowed(foo, '/private')).toBe(true);
    expect(star.sitemaps).toEqual(['http://127.0.0.1/sitemap.xml']);
  });

  it('takes the product token of a user agent, or * when there is none usable', () => {
    expect(productToken('MyCrawler/1.0 (+https://example.org)')).toBe('MyCrawler');
    expect(productToken(undefined)).toBe('*');
    expect(productToken('Mozilla/5.0 (X11)')).toBe('Mozilla');
    expect(productToken('123')).toBe('*');
  });
});

describe('page directives', () => {
  it.each([
    [['nofollow'], { nofollow: true, noindex: false }],
    [['NOINDEX, follow'], { nofollow: false, noindex: true }],
    [['none'], { nofollow: true, noindex: true }],
    [['otherbot: nofollow'], { nofollow: false, noindex: false }],
    [['mybot: noindex'], { nofollow: false, noindex: true }],
    [['all', 'nofollow'], { nofollow: true, noindex: false }],
  ])('%j gives %j', (values, expected) => {
    expect(pageDirectives(values, 'MyBot')).toEqual(expected);
  });
});

describe('URL normalisation', () => {
  it.each([
    ['HTTP://LocalHost:80/a#frag', 'http://localhost/a'],
    ['https://127.0.0.1:443/', 'https://127.0.0.1/'],
    ['http://127.0.0.1/a?', 'http://127.0.0.1/a'],
    ['http://127.0.0.1/%7euser/%2f', 'http://127.0.0.1/~user/%2F'],
    ['http://127.0.0.1/p;jsessionid=0A1B2C?x=1', 'http://127.0.0.1/p?x=1'],
    ['http://127.0.0.1/p?sid=9&b=2&PHPSESSID=3&sessionid=4', 'http://127.0.0.1/p?b=2'],
    ['http://user:pass@127.0.0.1/', 'http://127.0.0.1/'],
    ['http://127.0.0.1/a/./b/../c', 'http://127.0.0.1/a/c'],
  ])('%s is %s', (raw, expected) => {
    expect(normaliseUrl(raw)?.href).toBe(expected);
  });

  it('leaves other schemes out', () => {
    for (const raw of ['mailto:a@b.c', 'javascript:void(0)', 'ftp://127.0.0.1/', 'data:text/html,hi'])
      expect(normaliseUrl(raw)).toBeUndefined();
  });
});

describe('body types and encodings', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);
  it.each([
    ['text/html; charset=UTF-8', '', 'text/html', 'html'],
    ['', '<!DOCTYPE html><p>x', 'text/html', 'html'],
    ['', '%PDF-1.7\n', 'application/pdf', 'other'],
    ['', '\x89PNG\r\n\x1a\n', 'image/png', 'other'],
    ['application/octet-stream', '  <html><body>', 'text/html', 'html'],
    ['', 'just some words', 'text/plain', 'text'],
    ['', '\x00\x01\x02binary', 'application/octet-stream', 'other'],
    ['application/xhtml+xml', '<html/>', 'application/xhtml+xml', 'html'],
    ['image/svg+xml', '<svg/>', 'image/svg+xml', 'xml'],
  ])('Content-Type %j and %j give %s (%s)', (contentType, head, mime, kind) => {
    expect(bodyType(contentType, Buffer.from(head, 'latin1'))).toMatchObject({ mime, kind });
  });

  it('takes a BOM before the HTTP charset, the HTTP charset before a meta, a meta before sniffing', () => {
    const html = bodyType('text/html', new Uint8Array());
    const utf16 = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('\u00e9', 'utf16le').swap16()]);
    expect(detectEncoding(utf16, bodyType('text/html; charset=iso-8859-1', utf16))).toEqual({
      encoding: 'utf-16be',
      source: 'bom',
    });
    const meta = bytes('<meta charset="shift_jis"><p>x');
    expect(detectEncoding(meta, bodyType('text/html; charset=koi8-r', meta)).encoding).toBe('koi8-r');
    expect(detectEncoding(meta, html).encoding).toBe('shift_jis');
    const equiv = bytes('<meta http-equiv="Content-Type" content="text/html; charset=euc-kr">');
    expect(detectEncoding(equiv, html)).toEqual({ encoding: 'euc-kr', source: 'meta' });
    // A meta that claims UTF-16 in ASCII bytes is read as UTF-8 (WHATWG).
    expect(detectEncoding(bytes('<meta charset="utf-16">'), html).encoding).toBe('utf-8');
    expect(detectEncoding(bytes('caf\u00e9'), html)).toEqual({ encoding: 'utf-8', source: 'sniffed' });
    expect(detectEncoding(Buffer.from('caf\u00e9', 'latin1'), html)).toEqual({
      encoding: 'windows-1252',
      source: 'sniffed',
    });
  });

  it('decodes windows-1252 as WHATWG does, 0x80 to 0x9F included (Node 20 decodes them as C1 controls)', () => {
    const cp1252 = Buffer.from([0x80, 0x20, 0x93, 0x71, 0x94, 0x20, 0x85, 0x20, 0xe9, 0x20, 0x81]);
    expect(decodeText(cp1252, bodyType('text/html; charset=latin1', cp1252)).text).toBe('€ “q” … é \u0081');
  });
});
