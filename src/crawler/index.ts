/** `cloud-browser/crawler`: the crawl configuration and the crawler client. */

export { CrawlerError, isCrawlerError } from '../errors.js';
export { CRAWLER_EVENTS, type CrawlerEvent } from '../webhooks/constants.js';
export {
  type CallOptions,
  type Clock,
  type CrawlContent,
  CrawlerClient,
  type CrawlerClientOptions,
  type CrawlStatus,
  type CrawlStatusName,
  type CrawlUrl,
  PromptStream,
  type SearchResponse,
} from './client.js';
export { type EncodedCrawlRequest, encodeCrawlRequest } from './multipart.js';
export {
  CONTENT_FORMATS,
  type ContentFormat,
  CRAWL_OPTION_NAMES,
  type CrawlConfig,
  type CrawlRequest,
  crawlConfigSchema,
  REFRESH_INTERVAL_RANGE,
  toCrawlRequest,
} from './schema.js';
