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
// At the viewport's width (1400 px) the page reports how far it scrolls
// sideways, the table cells cut off at the window's edge and the text of
// its error line ("horizontal-scroll", "cut-off", "error-text").
//
// The chart's time axis and verdict markers are reported as "time-ticks"
// ([{text, ms}]) and "verdict-markers" ([{ms, to}]). With --view=<fragment>
// the page is then loaded a second time with that view in its address
// ("view-restored": the controls' values, the charted row, the address and
// the requested test ids' text), and its window control is changed to
// --change-window ("view-after-change": the address then).
//
// Usage: node check_page.mjs <dir holding node_modules/playwright-core>
//          <chromium> <page url> <screenshot.png> <fresh user-data dir>
//          [--view=<fragment> --change-window=<window>
//           --view-id=<testid>...] <testid>...
import { createRequire } from "node:module";
import path from "node:path";

const [modulesDir, chromiumPath, url, screenshot, userDataDir, ...rest] =
    process.argv.slice(2);
const option = name => rest.filter(a => a.startsWith(`--${name}=`))
                           .map(a => a.slice(name.length + 3));
const ids = rest.filter(a => !a.startsWith("--"));
const view = option("view")[0];
const changeWindow = option("change-window")[0];
const viewIds = option("view-id");
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
  // The page at the viewport's width (1400 px, a laptop's): how far it
  // scrolls sideways ("horizontal-scroll", px), the cells that end past
  // the window's right edge or their panel's ("cut-off", one
  // "<text>: <right> px" per line)
  // and the error line in the header ("error-text").
  values["horizontal-scroll"] = await page.evaluate(() =>
      document.documentElement.scrollWidth -
      document.documentElement.clientWidth);
  values["cut-off"] = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    // A cell ends past the window, or past the panel holding it (which
    // would scroll it out of sight).
    const edge = c => {
      const box = c.closest("section");
      return Math.min(width, box ? box.getBoundingClientRect().right : width);
    };
    return [...document.querySelectorAll("th, td")]
        .filter(c => c.getClientRects().length > 0 &&
                     c.getBoundingClientRect().right > edge(c) + 0.5)
        .map(c => `${c.textContent.trim().slice(0, 40)}: ` +
                  `${Math.round(c.getBoundingClientRect().right)} px`)
        .join("\n");
  });
  values["error-text"] = await page.textContent("#error");
  values["time-ticks"] = await page.$$eval('[data-testid="time-tick"]',
      ts => ts.map(t => ({ text: t.textContent,
                           ms: Number(t.getAttribute("data-ms")) })));
  values["verdict-markers"] = await page.$$eval(
      '[data-testid="verdict-marker"]',
      ms => ms.map(m => ({ ms: Number(m.getAttribute("data-ms")),
                           to: m.getAttribute("data-to") })));

  // Errors until now (the canary's own console error is not one).
  const pageErrors = errors.slice();
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

  if (view !== undefined) {
    // A shared view: the same page opened at an address carrying it.
    const shared = await context.newPage();
    // Errors there, CSP violations included (console errors), count as
    // page errors.
    shared.on("pageerror", e => pageErrors.push(String(e)));
    shared.on("console", m => {
      if (m.type() === "error") pageErrors.push(m.text());
    });
    await shared.goto(url + "#" + view, { waitUntil: "load", timeout: 30000 });
    await shared.waitForSelector("body[data-generated-ms]", { timeout: 30000 });
    for (const id of viewIds) {
      await shared.waitForSelector(`[data-testid="${id}"]`, { timeout: 30000 });
    }
    const restored = await shared.evaluate(() => {
      const value = id => document.getElementById(id).value;
      const row = document.querySelector("#means tr.selected");
      return { segment: value("segment"), window: value("window"),
               k: value("cutoff"), experiment: value("experiment"),
               series: row ? row.getAttribute("data-testid") : "",
               hash: location.hash };
    });
    for (const id of viewIds) {
      restored[id] = (await shared.textContent(`[data-testid="${id}"]`)).trim();
    }
    values["view-restored"] = restored;
    await shared.selectOption("#window", changeWindow);
    values["view-after-change"] = await shared.evaluate(() => location.hash);
    await shared.close();
  }
  values["page-errors"] = pageErrors.join("\n");
  process.stdout.write(JSON.stringify(values) + "\n");
} finally {
  await context.close();
}
