/**
 * A page's frames as the Antibot domain sees them (out-of-process ones included), and the
 * elements in them: found by CSS, XPath, accessibility node or role, measured in main-frame
 * CSS pixels, checked for visibility.
 */
import type { AntibotSelector, FrameInfo } from 'cloud-browser';
import type { CdpClient } from '../cdp.js';
import type { Targets } from './targets.js';

/** One frame and the emulator's session that reaches it. */
export interface Frame extends FrameInfo {
  session: string;
  parentId: string | undefined;
}

interface FrameTree {
  frame: { id: string; parentId?: string; url: string; urlFragment?: string; name?: string; securityOrigin?: string };
  childFrames?: FrameTree[];
}

/** An element found: where it lives and how to reach it. */
export interface Found {
  frame: Frame;
  objectId: string;
}

/** A box in main-frame CSS pixels. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Why an element cannot be acted on. */
export class Unreachable extends Error {}

const WORLD = 'cloud-browser-antibot';

// Run in the element's frame: whether a person could see it, and why not.
const VISIBILITY = `function () {
  if (!this.isConnected) return 'it is no longer in the document';
  const style = getComputedStyle(this);
  if (style.display === 'none') return 'it is hidden (display: none)';
  if (style.visibility === 'hidden' || style.visibility === 'collapse') return 'it is hidden (visibility: hidden)';
  if (Number(style.opacity) === 0) return 'it is transparent (opacity: 0)';
  const r = this.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) return 'it has no size';
  return '';
}`;

/** The frames of a page and the elements in them. */
export class PageFrames {
  constructor(
    private readonly control: CdpClient,
    private readonly targets: Targets,
    readonly page: string,
  ) {}

  /** Every frame: the page's own (in process) first, then each out-of-process frame's. */
  async list(): Promise<Frame[]> {
    const frames: Frame[] = [];
    const seen = new Set<string>();
    const walk = (tree: FrameTree, session: string, oopif: boolean) => {
      const f = tree.frame;
      if (!seen.has(f.id) || oopif) {
        const at = frames.findIndex((x) => x.frameId === f.id);
        const frame: Frame = {
          frameId: f.id,
          url: f.url + (f.urlFragment ?? ''),
          origin: f.securityOrigin ?? originOf(f.url),
          frameName: f.name ?? '',
          isMainFrame: f.parentId === undefined && session === this.page,
          isOopif: oopif,
          session,
          parentId: f.parentId,
        };
        if (at === -1) frames.push(frame);
        else frames[at] = { ...frame, parentId: frames[at]?.parentId };
        seen.add(f.id);
      }
      for (const child of tree.childFrames ?? []) walk(child, session, false);
    };
    const { frameTree } = await this.control.send<{ frameTree: FrameTree }>('Page.getFrameTree', {}, this.page);
    walk(frameTree, this.page, false);
    for (const child of this.targets.framesUnder(this.page)) {
      const sub = await this.control
        .send<{ frameTree: FrameTree }>('Page.getFrameTree', {}, child.session)
        .catch(() => undefined);
      if (sub) walk(sub.frameTree, child.session, true);
    }
    return frames;
  }

  /** The first element `selector` names, in `frames` in order; undefined when none has it. */
  async find(selector: AntibotSelector, frames: Frame[]): Promise<Found | undefined> {
    for (const frame of frames) {
      const objectId = await this.findIn(selector, frame);
      if (objectId) return { frame, objectId };
    }
    return undefined;
  }

  private async findIn(selector: AntibotSelector, frame: Frame): Promise<string | undefined> {
    if (selector.type === 'css' || selector.type === 'xpath') {
      const contextId = await this.world(frame);
      const query = JSON.stringify(selector.query);
      const expression =
        selector.type === 'css'
          ? `document.querySelector(${query})`
          : `document.evaluate(${query}, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue`;
      const answer = await this.control.send<{
        result: { objectId?: string; subtype?: string };
        exceptionDetails?: { exception?: { description?: string } };
      }>('Runtime.evaluate', { expression, contextId }, frame.session);
      if (answer.exceptionDetails) {
        const what = selector.type === 'css' ? 'CSS selector' : 'XPath expression';
        throw new Unreachable(`${JSON.stringify(selector.query)} is not a valid ${what}`);
      }
      return answer.result.subtype === 'null' ? undefined : answer.result.objectId;
    }
    if (selector.type === 'axNodeId' || selector.type === 'role') {
      const node = await this.axNode(frame, (n) =>
        selector.type === 'axNodeId' ? n.nodeId === selector.query : matchesRole(n, selector.query),
      );
      if (node?.backendDOMNodeId === undefined) return undefined;
      return this.resolve(frame, node.backendDOMNodeId);
    }
    throw new Unreachable(`a ${selector.type} selector names no element here`);
  }

  /** The first accessibility node of `frame` that `match` accepts. */
  async axNode(frame: Frame, match: (node: AxNode) => boolean): Promise<AxNode | undefined> {
    const params = frame.isOopif || frame.isMainFrame ? {} : { frameId: frame.frameId };
    const { nodes } = await this.control
      .send<{ nodes: AxNode[] }>('Accessibility.getFullAXTree', params, frame.session)
      .catch(() => ({ nodes: [] as AxNode[] }));
    return nodes.find((n) => !n.ignored && match(n));
  }

  /** A DOM node by its backend id, as an object in the emulator's world of `frame`. */
  async resolve(frame: Frame, backendNodeId: number): Promise<string | undefined> {
    const contextId = await this.world(frame);
    const { object } = await this.control
      .send<{ object: { objectId?: string } }>(
        'DOM.resolveNode',
        { backendNodeId, executionContextId: contextId },
        frame.session,
      )
      .catch(() => ({ object: {} as { objectId?: string } }));
    return object.objectId;
  }

  /** Why the element cannot be seen, or '' when it can. */
  async hiddenReason(found: Found): Promise<string> {
    const { result } = await this.control.send<{ result: { value?: string } }>(
      'Runtime.callFunctionOn',
      { functionDeclaration: VISIBILITY, objectId: found.objectId, returnByValue: true },
      found.frame.session,
    );
    return result.value ?? 'it cannot be measured';
  }

  /** The element's box in main-frame CSS pixels (the first of its boxes). */
  async box(found: Found): Promise<Box> {
    const { quads } = await this.control
      .send<{ quads: number[][] }>('DOM.getContentQuads', { objectId: found.objectId }, found.frame.session)
      .catch(() => ({ quads: [] as number[][] }));
    const quad = quads[0];
    if (!quad) throw new Unreachable('it has no box on the page (hidden or not rendered)');
    const xs = [quad[0], quad[2], quad[4], quad[6]] as number[];
    const ys = [quad[1], quad[3], quad[5], quad[7]] as number[];
    const offset = await this.offsetOf(found.frame);
    const x = Math.min(...xs) + offset.x;
    const y = Math.min(...ys) + offset.y;
    return { x, y, width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
  }

  /** Where an out-of-process frame's viewport sits in the main frame: its owners' content boxes, added up. */
  private async offsetOf(frame: Frame): Promise<{ x: number; y: number }> {
    let x = 0;
    let y = 0;
    let session = frame.session;
    while (session !== this.page) {
      const frameId = this.targets.targetOf(session);
      const parent = this.targets.parentOf(session);
      if (!frameId || !parent) break;
      const owner = await this.control
        .send<{ backendNodeId: number }>('DOM.getFrameOwner', { frameId }, parent)
        .catch(() => undefined);
      const model = owner
        ? await this.control
            .send<{ model: { content: number[] } }>('DOM.getBoxModel', { backendNodeId: owner.backendNodeId }, parent)
            .catch(() => undefined)
        : undefined;
      if (!model) break;
      x += model.model.content[0] ?? 0;
      y += model.model.content[1] ?? 0;
      session = parent;
    }
    return { x, y };
  }

  /** An isolated world of the emulator's in `frame`: the page's scripts cannot see or change it. */
  async world(frame: Frame): Promise<number> {
    const { executionContextId } = await this.control.send<{ executionContextId: number }>(
      'Page.createIsolatedWorld',
      { frameId: frame.frameId, worldName: WORLD, grantUniveralAccess: true },
      frame.session,
    );
    return executionContextId;
  }
}

/** One node of `Accessibility.getFullAXTree`. */
export interface AxNode {
  nodeId: string;
  ignored?: boolean;
  role?: { value?: string };
  name?: { value?: string };
  backendDOMNodeId?: number;
  frameId?: string;
}

/** `role` or `role|name`, as the role selector writes it. */
export function matchesRole(node: AxNode, query: string): boolean {
  const bar = query.indexOf('|');
  const role = bar === -1 ? query : query.slice(0, bar);
  const name = bar === -1 ? undefined : query.slice(bar + 1);
  return node.role?.value === role && (name === undefined || (node.name?.value ?? '').trim() === name.trim());
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'null';
  }
}
