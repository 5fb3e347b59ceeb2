import { expect, test } from 'cloud-browser/test';

const site = () => process.env.SITE_URL ?? 'http://127.0.0.1/';

test('opens the shop in the cloud browser', async ({ page }) => {
  await page.goto(site());
  await expect(page).toHaveTitle('Example shop');
  await expect(page.getByRole('button', { name: 'Buy' })).toBeVisible();
});

test('sees the session options', async ({ page, cloudSession }) => {
  await page.goto(site());
  expect(cloudSession.runId).toBeTruthy();
  expect(await page.evaluate(() => [navigator.languages, window.innerWidth])).toEqual([['en-GB', 'en'], 1280]);
});

test('shares one session per worker', async ({ browser, cloudSession }) => {
  expect(browser).toBe(cloudSession.browser);
  expect(browser.isConnected()).toBe(true);
});

test('buys with human-like input through the service protocol', async ({ page, service }) => {
  await page.goto(site());
  let clicked = false;
  await page.exposeFunction('bought', () => {
    clicked = true;
  });
  await page.evaluate(() => {
    const button = document.querySelector('button');
    button?.addEventListener('click', () => (window as unknown as { bought(): void }).bought());
  });
  const answer = await service.antibot.clickOn({ selector: { type: 'role', query: 'button|Buy' } });
  expect(answer).toEqual({ success: true });
  await expect.poll(() => clicked).toBe(true);
});

test('downloads the receipt from the remote browser', async ({ page }) => {
  await page.goto(site());
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByText('Receipt').click()]);
  expect(download.suggestedFilename()).toBe('receipt.txt');
  const chunks: Buffer[] = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
  expect(Buffer.concat(chunks).toString()).toBe('Receipt: 1 example, 300 dollars\n');
});
