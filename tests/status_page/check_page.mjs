// Loads rankwatch's status page in Debian's Chromium, headless, driven by
// playwright-core (never a downloaded browser), waits until the page has
// rendered a summary, prints the text of the requested data-testid
// elements as one JSON object on stdout, and saves a full-page screenshot.
//
// Content-Security-Policy violations (the page's policy allows its inline
// script and style by hash only, and no inline style or handler attribute)
// are collected twice: the console messages Chromium writes for them
// ("Applying inline style violates the following Content Security Policy
// directive ...", "Refused to ..." in older versions) and the
// securitypolicyviolation events the page sees, from before its own script
// runs. They are printed as "csp-violations" (one per line). A canary then
// proves the policy is enforced and seen: a style attribute set on a new
// element must be refused, reported as "csp-canary" ("refused" and
// "reported on the console", or what was missing).
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
  const cspConsole = [];
  page.on("console", m => {
    if (m.type() === "error") errors.push(m.text());
    if (/Content Security Policy|Refused to/.test(m.text())) {
      cspConsole.push(m.text());
    }
  });
  await page.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener("securitypolicyviolation", e => {
      window.__cspViolations.push({
        canary: e.target instanceof Element && e.target.id === "csp-canary",
        text: `${e.violatedDirective} refused ${e.blockedURI || "inline"}` +
              ` at ${e.sourceFile || "?"}:${e.lineNumber}:${e.columnNumber}` +
              (e.sample ? ` (${e.sample})` : ""),
      });
    }, true);
  });
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

  // Everything the page did until now, then the canary.
  const consoleBefore = cspConsole.length;
  const seen = await page.evaluate(() =>
      window.__cspViolations.filter(v => !v.canary).map(v => v.text));
  values["csp-violations"] =
      seen.concat(cspConsole.slice(0, consoleBefore)).join("\n");
  await page.evaluate(() => {
    const s = document.createElement("span");
    s.id = "csp-canary";
    document.body.append(s);
    s.setAttribute("style", "color: red");
  });
  const refused = await page.waitForFunction(
      () => window.__cspViolations.some(v => v.canary), null,
      { timeout: 10000 }).then(() => true, () => false);
  const applied = await page.evaluate(
      () => document.getElementById("csp-canary").style.color !== "");
  const logged = await new Promise(resolve => {
    const deadline = Date.now() + 10000;
    const check = () => {
      if (cspConsole.length > consoleBefore) resolve(true);
      else if (Date.now() > deadline) resolve(false);
      else setTimeout(check, 50);
    };
    check();
  });
  values["csp-canary"] = [
      refused ? "refused" : "no securitypolicyviolation event",
      applied ? "but applied" : "",
      logged ? "reported on the console" : "not on the console"]
      .filter(x => x).join(" and ");
  process.stdout.write(JSON.stringify(values) + "\n");
} finally {
  await context.close();
}
