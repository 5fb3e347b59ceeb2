/**
 * `Page.getRenderedContent` (docs/wire.md §10): the page as rendered, read from the live DOM
 * (not the HTML it arrived as), each iframe's document inlined in place, out-of-process ones
 * too; as Markdown through the crawler's own converter; a PDF or an image as its bytes.
 */

import type { CdpClient } from '../cdp.js';
import { escapeHtml } from '../crawler/convert.js';
import { convertPage } from '../crawler/formats.js';
import type { Targets } from './targets.js';

interface DomNode {
  nodeType: number;
  nodeName: string;
  localName?: string;
  nodeValue?: string;
  attributes?: string[];
  children?: DomNode[];
  contentDocument?: DomNode;
  frameId?: string;
  shadowRoots?: DomNode[];
  templateContent?: DomNode;
}

const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'source',
  'track',
  'wbr',
]);
const RAW_TEXT = new Set(['script', 'style']);

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

/** The rendered content of one page. */
export class RenderedContent {
  constructor(
    private readonly control: CdpClient,
    private readonly targets: Targets,
  ) {}

  async read(page: string, params: { renderIframe?: boolean; format?: 'html' | 'markdown' }) {
    const { result } = await this.control.send<{ result: { value: { type: string; url: string } } }>(
      'Runtime.evaluate',
      { expression: '({ type: document.contentType, url: location.href })', returnByValue: true },
      page,
    );
    const { type, url } = result.value;
    if (!/html|xml/.test(type)) return this.nonHtml(page, type, url);
    const html = await this.html(page, params.renderIframe !== false);
    if (params.format === 'markdown')
      return { content: convertPage(html, url, ['markdown']).markdown, type: 'markdown' };
    return { content: html, type: 'text' };
  }

  /** A document that is not HTML: plain text as text, anything else (PDF, image) as its bytes. */
  private async nonHtml(page: string, type: string, url: string) {
    const { frameTree } = await this.control.send<{ frameTree: { frame: { id: string } } }>(
      'Page.getFrameTree',
      {},
      page,
    );
    const resource = await this.control.send<{ content: string; base64Encoded: boolean }>(
      'Page.getResourceContent',
      { frameId: frameTree.frame.id, url },
      page,
    );
    if (type.startsWith('text/')) {
      const text = resource.base64Encoded ? Buffer.from(resource.content, 'base64').toString('utf8') : resource.content;
      return { content: text, type: 'text' };
    }
    const bytes = resource.base64Encoded ? resource.content : Buffer.from(resource.content).toString('base64');
    return { content: bytes, type: 'binary' };
  }

  /** The page's document as HTML, its frames' documents inlined when `frames`. */
  private async html(session: string, frames: boolean): Promise<string> {
    const { root } = await this.control.send<{ root: DomNode }>(
      'DOM.getDocument',
      { depth: -1, pierce: true },
      session,
    );
    return this.serialize(root, frames);
  }

  private async serialize(node: DomNode, frames: boolean): Promise<string> {
    switch (node.nodeType) {
      case 3:
        return escapeHtml(node.nodeValue ?? '');
      case 8:
        return `<!--${node.nodeValue ?? ''}-->`;
      case 10:
        return `<!DOCTYPE ${node.nodeName}>`;
      case 9:
      case 11:
        return this.children(node.children, frames, false);
      case 1:
        return this.element(node, frames);
      default:
        return '';
    }
  }

  private async children(children: DomNode[] | undefined, frames: boolean, raw: boolean): Promise<string> {
    let out = '';
    for (const child of children ?? []) {
      out += raw && child.nodeType === 3 ? (child.nodeValue ?? '') : await this.serialize(child, frames);
    }
    return out;
  }

  private async element(node: DomNode, frames: boolean): Promise<string> {
    const name = node.localName || node.nodeName.toLowerCase();
    const attrs = node.attributes ?? [];
    let open = `<${name}`;
    for (let i = 0; i + 1 < attrs.length; i += 2) open += ` ${attrs[i]}="${escapeAttr(attrs[i + 1] ?? '')}"`;
    open += '>';
    if (VOID.has(name)) return open;
    if ((name === 'iframe' || name === 'frame') && frames) {
      // Inlined as a block of the page: an <iframe>'s children would parse as text (docs/decisions.md D28).
      const src = attrs[attrs.indexOf('src') + 1] ?? '';
      const at = attrs.indexOf('src') === -1 ? '' : ` data-iframe-src="${escapeAttr(src)}"`;
      return `<div${at}>${await this.frame(node)}</div>`;
    }
    let inner: string;
    if (node.templateContent) inner = await this.serialize(node.templateContent, frames);
    else inner = await this.children(node.children, frames, RAW_TEXT.has(name));
    return `${open}${inner}</${name}>`;
  }

  /** An iframe's document, from the page's own DOM or from its out-of-process session. */
  private async frame(node: DomNode): Promise<string> {
    let doc = node.contentDocument;
    if (!doc && node.frameId) {
      const session = this.targets.frameSession(node.frameId);
      if (session) {
        doc = await this.control
          .send<{ root: DomNode }>('DOM.getDocument', { depth: -1, pierce: true }, session)
          .then((a) => a.root)
          .catch(() => undefined);
      }
    }
    if (!doc) return '';
    const html = doc.children?.find((c) => c.nodeType === 1);
    const body = html?.children?.find((c) => c.localName === 'body');
    return body ? this.children(body.children, true, false) : this.serialize(doc, true);
  }
}
