/**
 * The crawler's types, in a file of their own: what a crawl keeps of each URL, its limits,
 * and what the emulator gives a crawl (its clock, its events, its runner).
 */

import type { ContentFormat, CrawlConfig } from 'cloud-browser/crawler';
import type { CrawlerEvent } from 'cloud-browser/webhooks';
import type { BodyRef, PageBodies } from './bodies.js';
import type { EmulatedCrawl } from './crawl.js';
import type { BodyKind } from './decode.js';

/** One URL the crawl met. */
export interface PageRecord {
  url: string;
  status: 'visited' | 'failed' | 'skipped';
  reason?: string;
  depth: number;
  http_status?: number;
  title?: string;
  /** The decoded HTML of an HTML page, kept in the crawl's file of bodies. */
  html?: BodyRef;
  /** The decoded text of a text page (text/plain, text/markdown…), kept there too. */
  text?: BodyRef;
  /** The crawl's file of bodies, where `html`, `text` and `formats` are. */
  bodies?: PageBodies;
  /** What the crawler made of the body: HTML and text are converted and indexed, the rest not. */
  kind?: BodyKind;
  /** The encoding the text was decoded with. */
  encoding?: string;
  /** The body's size in bytes, decoded. */
  size?: number;
  /** Where a redirect pointed, for a URL skipped as `redirected` (or refused out of scope). */
  redirect_to?: string;
  /** The headings of its main content, found when its formats were converted. */
  headings?: string[];
  /** Each format, converted once on first use and kept in the crawl's file of bodies. */
  formats?: Partial<Record<ContentFormat, BodyRef>>;
  hash?: string;
  /** What went wrong, beside the one-word `reason`. */
  error?: string;
  content_type?: string;
  headers?: Record<string, string>;
  fetched_at?: string;
  duration_ms?: number;
  extracted?: Record<string, unknown>;
}

/** The emulator's own bounds on every crawl. */
export interface CrawlLimits {
  /** The most bytes of one response, on the wire and after decoding; a larger one fails as `too_large`. */
  maxResponseBytes: number;
  /** The pages a crawl without `page_limit` (or with 0) visits at most; it then stops with `page_limit`. */
  pageLimit: number;
}

/** @default */
export const CRAWL_LIMITS_DEFAULTS: CrawlLimits = { maxResponseBytes: 10 * 1024 * 1024, pageLimit: 10_000 };

/** The crawler's side of the emulator: how it reaches sites, tells time and delivers events. */
export interface CrawlHost {
  now(): number;
  /** Deliver `event` when the crawl asked for it; `data` may be made only then (a page's contents). */
  emit(
    crawl: EmulatedCrawl,
    event: CrawlerEvent,
    data: Record<string, unknown> | (() => Record<string, unknown>),
  ): void;
  /** Carry out one run of the crawl (the first, or a refresh). */
  run(crawl: EmulatedCrawl, isRefresh: boolean): Promise<void>;
  readonly limits: CrawlLimits;
}

export type Parsed = CrawlConfig;
