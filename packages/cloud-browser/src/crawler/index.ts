/** `cloud-browser/crawler`: the crawl configuration and the crawler client, on the live wire. */

export { CrawlerError, isCrawlerError } from '../errors.js';
export { CRAWLER_EVENTS, type CrawlerEvent } from '../webhooks/constants.js';
export {
  type CallOptions,
  type Clock,
  CRAWLER_CLIENT_DEFAULTS,
  CrawlerClient,
  type CrawlerClientOptions,
  type PromptParams,
  type RefreshSettings,
  type SearchParams,
  type WaitOptions,
} from './client.js';
export { type EncodedCrawlRequest, encodeCrawlRequest } from './multipart.js';
export { PromptStream } from './prompt.js';
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
export {
  type CrawlContent,
  type CrawlRefreshState,
  type CrawlSearchState,
  type CrawlState,
  type CrawlStatus,
  type CrawlStatusName,
  type CrawlStopReason,
  type CrawlUrl,
  type CrawlUrlStatus,
  type PromptDone,
  type PromptSource,
  readRefreshState,
  readSearch,
  readStatus,
  readToken,
  readUrlLines,
  SEARCH_MODES,
  type SearchMode,
  type SearchResponse,
  type SearchResult,
  type SearchSkipped,
  URL_STATUSES,
} from './wire.js';
