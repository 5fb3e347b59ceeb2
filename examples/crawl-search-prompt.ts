/**
 * Crawl a site with a search index, search it, and stream an answer.
 * Run: CLOUD_API_URL=... CLOUD_API_KEY=... npx tsx examples/crawl-search-prompt.ts https://example.com "What does it cost?"
 */
import { CrawlerClient } from 'cloud-browser/crawler';

const [url = 'https://example.com', question = 'What is this site about?'] = process.argv.slice(2);
const crawler = new CrawlerClient();
const { uuid } = await crawler.start({ url, page_limit: 50, search: true, content_formats: ['markdown'] });
const done = await crawler.wait(uuid, {
  pollInterval: 500,
  onProgress: (s) => console.error(`visited ${s.state.urls_visited}`),
});
console.log(`crawl ${uuid}: ${done.state.urls_visited} pages`);
const { results } = await crawler.search({ crawls: [uuid], query: question });
for (const hit of results.slice(0, 3)) console.log(`${hit.rank}. ${hit.url}: ${hit.text.slice(0, 80)}`);
const answer = crawler.prompt({ crawls: [uuid], prompt: question });
for await (const token of answer) process.stdout.write(token);
process.stdout.write('\n');
for (const source of answer.sources) console.log(`[${source.id}] ${source.url}`);
