// Bundles dom-accessibility-api into one script the page agent splices in (see build.sh).
// One patch, for speed: the library reads `element.labels`, which Chromium answers by scanning
// the whole document on every call (quadratic on big pages). The agent's `labelsOf` (roles.js)
// answers from a map it builds once per snapshot.
import { build } from "esbuild";
import { readFile } from "node:fs/promises";

const LABELS = "var labelsProperty = element.labels;";
const patchLabels = {
  name: "labels-from-agent",
  setup(b) {
    b.onLoad({ filter: /accessible-name-and-description\.mjs$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      if (!source.includes(LABELS)) throw new Error(`dom-accessibility-api changed: "${LABELS}" not found; update the patch`);
      return { contents: source.replace(LABELS, "var labelsProperty = labelsOf(element);"), loader: "js" };
    });
  },
};

const result = await build({
  entryPoints: ["entry.js"], bundle: true, format: "iife", globalName: "accname", target: "chrome100",
  minifyWhitespace: true, minifySyntax: true, legalComments: "none", write: false, plugins: [patchLabels],
});
process.stdout.write(result.outputFiles[0].text);
