/** The emulator's webhook deliveries: a queue per named webhook, signed, retried, recorded. */
import { setTimeout as sleep } from 'node:timers/promises';
import { type CrawlerEvent, headerNames, signDelivery } from 'cloud-browser/webhooks';
import type { EmulatedCrawl } from './crawl.js';

/** A named webhook: where deliveries go and the secret that signs them. */
export interface EmulatorWebhook {
  url: string;
  secret: string;
  /**
   * The delivery headers' prefix: the spec's, or `X-Scrapfly-Webhook-` to speak to a receiver
   * written for the live service (the official SDK's).
   * @default 'X-Service-Webhook-'
   */
  headerPrefix?: string | undefined;
}

/** A delivery the emulator made, for tests and the CLI. */
export interface DeliveryRecord {
  webhook: string;
  event: CrawlerEvent | 'ping';
  crawl?: string;
  status: number | 'failed';
  attempts: number;
}

const DEFAULT_EVENTS: CrawlerEvent[] = ['crawler_started', 'crawler_stopped', 'crawler_cancelled', 'crawler_finished'];
const ATTEMPTS = 4;
/**
 * A crawl delivery's body (docs/decisions.md D17): `{event, payload}`, the payload carrying `crawler_uuid`,
 * `project`, `env`, `action` and `state` and the event's own fields.
 */
export function deliveryBody(
  crawl: EmulatedCrawl,
  event: CrawlerEvent,
  data: Record<string, unknown>,
  apiUrl: string,
): { event: CrawlerEvent; payload: Record<string, unknown> } {
  const c = crawl.config;
  const search = event === 'crawler_search_ready' || event === 'crawler_search_failed';
  return {
    event,
    payload: {
      crawler_uuid: crawl.uuid,
      project: 'default',
      env: 'TEST',
      // The service sends no action on the two search events.
      action: search ? '' : event.replace(/^crawler_/, ''),
      state: crawl.state(),
      // Lifecycle, search and refresh events name the seed and the status route; URL events do not.
      ...(!event.startsWith('crawler_url_')
        ? {
            seed_url: c.url ?? c.url_list?.[0] ?? c.remote_url_list ?? '',
            links: { status: `${apiUrl}/crawl/${crawl.uuid}/status` },
          }
        : {}),
      ...data,
    },
  };
}

/**
 * Deliveries to each webhook go out in order, one at a time; the first to a webhook is
 * preceded by an unsigned ping. A delivery answered 5xx, 429 or not at all is tried again.
 */
export class DeliveryQueue {
  readonly deliveries: DeliveryRecord[] = [];
  private readonly pinged = new Set<string>();
  private readonly chains = new Map<string, Promise<void>>();
  /** Aborted by {@link DeliveryQueue.close}: no request starts after, none in flight goes on. */
  private readonly stopped = new AbortController();

  constructor(
    private readonly webhooks: Record<string, EmulatorWebhook> | undefined,
    /** The emulator's API address, for the payloads' status links. */
    private readonly apiUrl: () => string,
  ) {}

  /** Whether a webhook of that name exists. */
  has(name: string): boolean {
    return this.webhooks?.[name] !== undefined;
  }

  /** Queue the delivery of `event` of `crawl`, when the crawl asked for it. */
  emit(
    crawl: EmulatedCrawl,
    event: CrawlerEvent,
    data: Record<string, unknown> | (() => Record<string, unknown>),
  ): void {
    const name = crawl.config.webhook_name;
    const hook = name ? this.webhooks?.[name] : undefined;
    if (!name || !hook) return;
    const wanted = crawl.config.webhook_events?.length ? crawl.config.webhook_events : DEFAULT_EVENTS;
    if (!wanted.includes(event)) return;
    const body = deliveryBody(crawl, event, typeof data === 'function' ? data() : data, this.apiUrl());
    const previous = this.chains.get(name) ?? Promise.resolve();
    const next = previous.then(async () => {
      if (!this.pinged.has(name)) {
        this.pinged.add(name);
        await this.deliver(name, hook, 'ping', undefined, { resourceType: 'ping' });
      }
      await this.deliver(
        name,
        hook,
        event,
        crawl.uuid,
        signDelivery({
          body,
          secret: hook.secret,
          resourceType: 'crawl',
          contentEncoding: 'gzip',
          headerPrefix: hook.headerPrefix,
        }),
      );
    });
    this.chains.set(
      name,
      next.catch(() => {}),
    );
  }

  /** Wait until every delivery queued so far has been made. */
  async settled(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }

  /**
   * Stop delivering, as the emulator's shutdown does: a request in flight is aborted, a queued
   * one is never sent. Resolves when no request of the queue is open.
   */
  async close(): Promise<void> {
    this.stopped.abort();
    await this.settled();
  }

  private async deliver(
    name: string,
    hook: EmulatorWebhook,
    event: CrawlerEvent | 'ping',
    crawl: string | undefined,
    delivery: { headers: Record<string, string>; body: Buffer } | { resourceType: 'ping' },
  ): Promise<void> {
    const init =
      'resourceType' in delivery
        ? {
            headers: { [headerNames(hook.headerPrefix).resourceType]: 'ping', 'content-type': 'application/json' },
            body: '{}',
          }
        : { headers: delivery.headers, body: new Uint8Array(delivery.body) };
    let status: number | 'failed' = 'failed';
    let attempts = 0;
    for (; attempts < ATTEMPTS && !this.stopped.signal.aborted; ) {
      attempts++;
      try {
        const signal = AbortSignal.any([this.stopped.signal, AbortSignal.timeout(10_000)]);
        const res = await fetch(hook.url, { method: 'POST', ...init, signal });
        await res.arrayBuffer().catch(() => undefined);
        status = res.status;
        if (res.ok || (res.status < 500 && res.status !== 429)) break;
      } catch {
        status = 'failed';
      }
      // The pause before the next try ends at once when the queue closes.
      await sleep(100 * 2 ** attempts, undefined, { signal: this.stopped.signal }).catch(() => undefined);
    }
    if (attempts === 0) return; // Closed before its turn: never sent, nothing to record.
    this.deliveries.push({ webhook: name, event, ...(crawl ? { crawl } : {}), status, attempts });
  }
}
