// The site's search box without a browser: node node_search.js SITE_DIR < pastes.json
//
// Loads the site's own search-index.js and search.js (as render wrote them) into Node, with
// `window` the global object and no document, and answers each paste of the JSON list read from
// stdin with the box's readings and rows (window.errcatReadings, window.errcatResults), as one
// JSON list on stdout. tests/consume/test_search_parity.py compares them with errcat match's.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

globalThis.window = globalThis;
const site = process.argv[2];
for (const name of ["search-index.js", "search.js"]) {
  vm.runInThisContext(fs.readFileSync(path.join(site, name), "utf8"), {filename: name});
}
const pastes = JSON.parse(fs.readFileSync(0, "utf8"));
const out = pastes.map(function (p) {
  const text = typeof p === "string" ? p : p.text;
  return {
    readings: window.errcatReadings(text).map(function (r) { return [r.m, r.x, r.src, r.f ? [r.f[0], r.f[1], r.f[2]] : null, r.t, r.ln]; }),
    results: window.errcatResults(text),
  };
});
process.stdout.write(JSON.stringify(out));
