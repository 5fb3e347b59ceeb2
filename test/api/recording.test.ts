/**
 * Session recordings (D23): a `debug` session is recorded into a WebM that a real Chromium
 * `<video>` plays at the session's size, showing what the session showed, in order.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ScrapflyClient } from 'scrapfly-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CloudBrowserApi,
  isServiceError,
  isTimeoutError,
  type ServiceError,
} from '../../packages/cloud-browser/src/api/index.js';
import { connectPlaywright } from '../../packages/cloud-browser/src/connect/playwright.js';
import { isConfigError } from '../../packages/cloud-browser/src/index.js';
import { findChromium } from '../../packages/emulator/src/chromium.js';
import { type Emulator, startEmulator } from '../../packages/emulator/src/index.js';
import { withDuration } from '../../packages/emulator/src/recording/webm.js';
import { rejection } from '../support/rejection.js';

const COLOURS = { red: [230, 20, 20], green: [20, 200, 20], blue: [20, 20, 230] } as const;

let emulator: Emulator;
let api: CloudBrowserApi;
let site: Server;
let siteUrl: string;
let player: Browser;
let playerPage: Page;

beforeAll(async () => {
  emulator = await startEmulator();
  api = new CloudBrowserApi({ browserUrl: emulator.browserUrl, key: emulator.apiKey });
  site = createServer((req, res) => {
    const name = (req.url ?? '/').slice(1) as keyof typeof COLOURS;
    const [r, g, b] = COLOURS[name] ?? [255, 255, 255];
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<!doctype html><title>${name}</title><style>html{background:rgb(${r},${g},${b});height:100%}</style>`);
  });
  site.listen(0, '127.0.0.1');
  await once(site, 'listening');
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  player = await chromium.launch({ executablePath: await findChromium(), args: ['--no-sandbox'] });
  playerPage = await player.newPage();
});
afterAll(async () => {
  await player?.close();
  await emulator?.close();
  site?.close();
});

/** A debug session at 640x360 that shows red, green and blue pages, a second each. */
async function recordedRun(): Promise<string> {
  const session = await connectPlaywright(chromium, {
    browser_url: emulator.browserUrl,
    api_key: emulator.apiKey,
    debug: true,
    resolution: '640x360',
  });
  const page = await (session.browser.contexts()[0] ?? (await session.browser.newContext())).newPage();
  for (const name of Object.keys(COLOURS)) {
    await page.goto(`${siteUrl}/${name}`);
    await page.waitForTimeout(1200);
  }
  const runId = session.runId as string;
  // While the session lives, its recording is not ready.
  expect(await api.runs.playback(runId)).toMatchObject({
    available: false,
    status: 'uploading',
    retry_after_ms: 500,
    video_url: null,
  });
  await session.close();
  return runId;
}

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Play `webm` in a real Chromium `<video>`: its size, duration, and the colour name every 200 ms. */
async function play(webm: Buffer) {
  return playerPage.evaluate(
    async ([b64, colours]) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const video = document.createElement('video');
      video.muted = true;
      video.src = URL.createObjectURL(new Blob([bytes], { type: 'video/webm' }));
      document.body.append(video);
      await new Promise((resolve, reject) => {
        video.onloadeddata = resolve;
        video.onerror = () => reject(new Error(`the video does not play: ${video.error?.message}`));
      });
      const canvas = document.createElement('canvas');
      canvas.width = video.videoWidth;
      canvas.height = video.videoHeight;
      const g = canvas.getContext('2d') as CanvasRenderingContext2D;
      const seen: string[] = [];
      for (let t = 0; t < video.duration; t += 0.2) {
        video.currentTime = t;
        await new Promise((resolve) => {
          video.onseeked = resolve;
        });
        g.drawImage(video, 0, 0);
        const [r, gr, b] = g.getImageData(canvas.width / 2, canvas.height / 2, 1, 1).data;
        const name = Object.entries(colours).find(
          ([, c]) =>
            Math.abs(c[0] - (r as number)) + Math.abs(c[1] - (gr as number)) + Math.abs(c[2] - (b as number)) < 90,
        )?.[0];
        if (name && seen.at(-1) !== name) seen.push(name);
      }
      return { width: video.videoWidth, height: video.videoHeight, duration: video.duration, seen };
    },
    [webm.toString('base64'), COLOURS] as const,
  );
}

describe('recordings of debug sessions', () => {
  it('records what the session shows into a WebM a <video> plays at the session’s size', async () => {
    const runId = await recordedRun();
    const playback = await api.runs.waitForPlayback(runId, { timeout: 60_000 });
    expect(playback).toMatchObject({
      available: true,
      status: 'ready',
      metadata: { width: 640, height: 360 },
      video_url: `${emulator.apiUrl}/run/${runId}/video`,
    });
    // How much of the 3.6 s is recorded depends on how soon the recorder's own Chromium started on
    // a busy machine: no timing here beyond the one second every recording lasts; the colours
    // seen in order below are the proof.
    expect(playback.metadata?.duration_ms).toBeGreaterThanOrEqual(1000);
    expect(playback.metadata?.frames).toBeGreaterThanOrEqual(3);
    const webm = await bytesOf(await api.runs.video(runId));
    expect(webm.subarray(0, 4).toString('hex')).toBe('1a45dfa3');
    const shown = await play(webm);
    expect([shown.width, shown.height]).toEqual([640, 360]);
    expect(Number.isFinite(shown.duration) && shown.duration).toBeGreaterThanOrEqual(1);
    expect(shown.seen).toEqual(['red', 'green', 'blue']);

    // The official SDK reads the same recording.
    const sdk = new ScrapflyClient({ key: emulator.apiKey, cloudBrowserHost: emulator.apiUrl });
    expect(await sdk.cloudBrowserWaitForPlayback(runId, { timeoutMs: 10_000 })).toMatchObject({ status: 'ready' });
    const downloaded = await sdk.cloudBrowserVideo(runId);
    expect(Buffer.from(downloaded.data).equals(webm)).toBe(true);

    // A <video> asks for ranges; the emulator answers them.
    const ranged = await fetch(`${emulator.apiUrl}/run/${runId}/video?key=${emulator.apiKey}`, {
      headers: { range: 'bytes=4-11' },
    });
    expect([ranged.status, ranged.headers.get('content-range')]).toEqual([206, `bytes 4-11/${webm.length}`]);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(webm.subarray(4, 12))).toBe(true);
  });

  it('answers disabled for a session without debug, and 404 for an unknown run or another key’s', async () => {
    const session = await connectPlaywright(chromium, { browser_url: emulator.browserUrl, api_key: emulator.apiKey });
    const runId = session.runId as string;
    await session.close();
    expect(await api.runs.waitForPlayback(runId)).toEqual({
      available: false,
      status: 'disabled',
      metadata: null,
      video_url: null,
      retry_after_ms: null,
    });
    const noVideo = (await rejection(api.runs.video(runId))) as ServiceError;
    expect(isServiceError(noVideo) && [noVideo.http_status_code, noVideo.code]).toEqual([
      404,
      'ERR::BROWSER::RECORDING_NOT_READY',
    ]);
    const unknown = (await rejection(api.runs.playback('run-0000000000000000'))) as ServiceError;
    expect(isServiceError(unknown) && unknown.http_status_code).toBe(404);
    const other = await startEmulator({ apiKeys: [emulator.apiKey, 'someone-else-key'], vncPort: 0 });
    try {
      const theirs = new CloudBrowserApi({ browserUrl: other.browserUrl, key: 'someone-else-key' });
      const mine = await connectPlaywright(chromium, { browser_url: other.browserUrl, api_key: emulator.apiKey });
      await mine.close();
      expect(((await rejection(theirs.runs.playback(mine.runId as string))) as ServiceError).http_status_code).toBe(
        404,
      );
    } finally {
      await other.close();
    }
  });

  it('waits as long as the service says, and no longer than its timeout', async () => {
    const session = await connectPlaywright(chromium, {
      browser_url: emulator.browserUrl,
      api_key: emulator.apiKey,
      debug: true,
    });
    try {
      const sleeps: number[] = [];
      let now = 0;
      const timed = new CloudBrowserApi({
        browserUrl: emulator.browserUrl,
        key: emulator.apiKey,
        clock: {
          now: () => now,
          sleep: async (ms) => {
            sleeps.push(ms);
            now += ms;
          },
        },
      });
      const error = await rejection(timed.runs.waitForPlayback(session.runId as string, { timeout: 1_200 }));
      expect(isTimeoutError(error)).toBe(true);
      // 500 ms each time (the emulator's retry_after_ms), the last cut to the time left.
      expect(sleeps).toEqual([500, 500, 200]);
      for (const bad of [{ timeout: Number.NaN }, { pollInterval: 0 }, { timeout: -1 }]) {
        expect(isConfigError(await rejection(timed.runs.waitForPlayback(session.runId as string, bad)))).toBe(true);
      }
    } finally {
      await session.close();
    }
  });
});

describe('the WebM duration fix', () => {
  it('adds a Duration to the Info of a live-written header, and replaces one that is there', () => {
    // EBML header (empty), Segment of unknown size, Info { TimecodeScale 1000000 }, then a Cluster start.
    const header = Buffer.from(
      '1a45dfa3 80 18538067 01ffffffffffffff 1549a966 88 2ad7b1 83 0f4240 4489 80 1f43b675 01ffffffffffffff'.replace(
        / /g,
        '',
      ),
      'hex',
    );
    const fixed = withDuration(header, 4200) as Buffer;
    const at = fixed.indexOf(Buffer.from('4489', 'hex'));
    expect(fixed[at + 2]).toBe(0x88);
    expect(fixed.readDoubleBE(at + 3)).toBe(4200);
    // One Duration only, and the cluster still follows.
    expect(fixed.indexOf(Buffer.from('4489', 'hex'), at + 1)).toBe(-1);
    expect(fixed.subarray(-12).toString('hex')).toBe('1f43b67501ffffffffffffff');
    expect(withDuration(Buffer.from('not a webm'), 1)).toBeUndefined();
  });
});
