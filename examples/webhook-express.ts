/**
 * Receive the service's webhooks in Express. The listener reads the raw body itself, so it is
 * mounted before any body parser.
 * Run: SIGNING_SECRET=... npx tsx examples/webhook-express.ts [port]
 */
import { createNodeWebhookListener, parseCrawlEvent } from 'cloud-browser/webhooks';
import express from 'express';

const app = express();
app.post(
  '/webhook',
  createNodeWebhookListener({
    secrets: (process.env.SIGNING_SECRET ?? '').split(',').filter(Boolean),
    onDelivery: ({ resourceType, body }) => {
      const detail = resourceType === 'crawl' ? parseCrawlEvent(body).event : `${body.length} bytes`;
      console.log(`delivery ${resourceType} ${detail}`);
    },
  }),
);
app.use(express.json()); // other routes may parse JSON; the webhook route above never sees it
const server = app.listen(Number(process.argv[2] ?? 8080), '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : ''}/webhook`);
});
process.once('SIGINT', () => server.close());
process.once('SIGTERM', () => server.close());
