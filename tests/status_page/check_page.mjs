// Loads rankwatch's status page in Debian's Chromium, headless, driven by
// playwright-core (never a downloaded browser), waits until the page has
// rendered a summary, prints the text of the requested data-testid
// elements as one JSON object on stdout, and saves a full-page screenshot.
//
// Usage: node check_page.mjs <dir holding node_modules/playwright-core>
//          <chromium> <page url> <screenshot.png> <fresh user-data dir>
//          <testid>...
import { createRequire } from "node:module";
import path from "node:path";

const [modulesDir, chromiumPath, url, screenshot, userDataDir, ...ids] =
    process.argv.slice(2);
const require = createRequire(path.join(modulesDir, "package.json"));
const { chromium } = require("playwright-core");

const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: chromiumPath,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync"],
  viewport: { width: 1400, height: 900 },
});
try {
  const page = context.pages()[0] || await context.newPage();
  const errors = [];
  page.on("pageerror", e => errors.push(String(e)));
  page.on("console", m => { if (m.type() === "error") errors.push(m.text()); });
  await page.goto(url, { waitUntil: "load", timeout: 30000 });
  // Rendered: the body carries the summary's timestamp, and the test ids.
  await page.waitForSelector("body[data-generated-ms]", { timeout: 30000 });
  for (const id of ids) {
    await page.waitForSelector(`[data-testid="${id}"]`, { timeout: 30000 });
  }
  // One more poll, so that the values come from the settled state.
  const first = await page.getAttribute("body", "data-generated-ms");
  await page.waitForFunction(
      g => document.body.getAttribute("data-generated-ms") !== g, first,
      { timeout: 30000 });
  const values = {};
  for (const id of ids) {
    values[id] = (await page.textContent(`[data-testid="${id}"]`)).trim();
  }
  await page.screenshot({ path: screenshot, fullPage: true });
  values["page-errors"] = errors.join("\n");
  process.stdout.write(JSON.stringify(values) + "\n");
} finally {
  await context.close();
}
