/**
 * Receive the service's webhooks in Hono (the same handler serves Next.js route handlers
 * and other fetch-style runtimes).
 * Run: SIGNING_SECRET=... npx tsx examples/webhook-hono.ts [port]
 */
import { serve } from '@hono/node-server';
import { createWebhookHandler, parseCrawlEvent } from 'cloud-browser/webhooks';
import { Hono } from 'hono';

const handler = createWebhookHandler({
  secrets: (process.env.SIGNING_SECRET ?? '').split(',').filter(Boolean),
  onDelivery: ({ resourceType, body }) => {
    const detail = resourceType === 'crawl' ? parseCrawlEvent(body).event : `${body.length} bytes`;
    console.log(`delivery ${resourceType} ${detail}`);
  },
});
const app = new Hono();
app.post('/webhook', (c) => handler(c.req.raw));
const server = serve({ fetch: app.fetch, port: Number(process.argv[2] ?? 8080), hostname: '127.0.0.1' }, (info) => {
  console.log(`listening on http://127.0.0.1:${info.port}/webhook`);
});
process.once('SIGINT', () => server.close());
process.once('SIGTERM', () => server.close());
