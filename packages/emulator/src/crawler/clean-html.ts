/**
 * A content tree written back as HTML: what dom-serializer writes with `encodeEntities: 'utf8'`
 * (HTML's own escapes, nothing else encoded; empty attributes bare; void elements unclosed),
 * written here for the common case, where it is most of the cost of clean HTML: each text and
 * attribute value is searched for a character to escape before anything is replaced, and no
 * options are looked up per node. SVG and MathML, comments and directives go to dom-serializer.
 */
import { type ChildNode, type Element, isTag, isText } from 'domhandler';
import { DomUtils } from 'htmlparser2';

const OPTIONS = { encodeEntities: 'utf8' } as const;
/** Elements written without a closing tag (dom-serializer's list). */
const VOID = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
/** Elements whose text is written as it is. */
const RAW_TEXT = new Set(['style', 'script', 'xmp', 'iframe', 'noembed', 'noframes', 'plaintext', 'noscript']);
/** Where dom-serializer writes XML's way (names and attributes cased, empty elements closed). */
const FOREIGN = new Set(['svg', 'math']);

const TEXT_SPECIAL = /[&<>\u00a0]/;
const ATTRIBUTE_SPECIAL = /["&\u00a0]/;

const escapeText = (text: string) =>
  TEXT_SPECIAL.test(text)
    ? text
        .replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        .replace(/\u00a0/g, '&nbsp;')
    : text;
const escapeAttribute = (value: string) =>
  ATTRIBUTE_SPECIAL.test(value)
    ? value
        .replace(/&/g, '&amp;')
        .replace(/"/g, '&quot;')
        .replace(/\u00a0/g, '&nbsp;')
    : value;

/** The HTML of `el`'s children. */
export function innerHtml(el: Element): string {
  let out = '';
  for (const child of el.children) out += outerHtml(child);
  return out;
}

function outerHtml(node: ChildNode): string {
  if (isText(node)) {
    const parent = node.parent as Element | null;
    return parent && RAW_TEXT.has(parent.name) ? node.data : escapeText(node.data);
  }
  if (!isTag(node) || FOREIGN.has(node.name)) return DomUtils.getOuterHTML(node, OPTIONS);
  let out = `<${node.name}`;
  for (const key in node.attribs) {
    const value = node.attribs[key] ?? '';
    out += value === '' ? ` ${key}` : ` ${key}="${escapeAttribute(value)}"`;
  }
  out += '>';
  for (const child of node.children) out += outerHtml(child);
  return VOID.has(node.name) ? out : `${out}</${node.name}>`;
}
