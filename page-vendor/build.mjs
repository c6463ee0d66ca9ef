// Bundles dom-accessibility-api into one script the page agent splices in (see build.sh).
// Two patches, each checked so that a new version of the library fails the build instead of
// silently losing it:
// - speed: the library reads `element.labels`, which Chromium answers by scanning the whole
//   document on every call (quadratic on big pages). The agent's `labelsOf` (roles.js) answers
//   from a map it builds once per snapshot.
// - fidelity: the library trims each inline child's text, so `<span>3. </span>An` was named
//   "3.An"; Chromium keeps the space at the element's edge ("3. An"). The patch keeps it.
import { build } from "esbuild";
import { readFile } from "node:fs/promises";

const LABELS = "var labelsProperty = element.labels;";
const EDGE = 'var separator = display !== "inline" ? " " : "";\n      // trailing separator for wpt tests\n      accumulatedText += "".concat(separator).concat(result).concat(separator);';
const EDGE_KEPT = 'var separator = display !== "inline" ? " " : "";\n' +
  '      var edges = display === "inline" && isElement(child) ? child.textContent || "" : "";\n' +
  '      accumulatedText += (separator || (/^\\s/.test(edges) ? " " : "")) + result + (separator || (/\\s$/.test(edges) ? " " : ""));';

const patchLabels = {
  name: "labels-from-agent",
  setup(b) {
    b.onLoad({ filter: /accessible-name-and-description\.mjs$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      if (!source.includes(LABELS)) throw new Error(`dom-accessibility-api changed: "${LABELS}" not found; update the patch`);
      if (!source.includes(EDGE)) throw new Error("dom-accessibility-api changed: the inline separator code moved; update the patch");
      const patched = source.replace(LABELS, "var labelsProperty = labelsOf(element);").replace(EDGE, EDGE_KEPT);
      return { contents: patched, loader: "js" };
    });
  },
};

const result = await build({
  entryPoints: ["entry.js"], bundle: true, format: "iife", globalName: "accname", target: "chrome100",
  minifyWhitespace: true, minifySyntax: true, legalComments: "none", write: false, plugins: [patchLabels],
});
process.stdout.write(result.outputFiles[0].text);
