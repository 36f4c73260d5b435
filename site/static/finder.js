// The documentation site's recipe finder (docs/site.md). It shows kbq's
// answers, computed when the site was built (site/build.py: kbq --batch),
// loaded per model when chosen. No planning happens here: the page picks
// the answer kbq gave to the question the choices make, and shows it.
// Every word on the page comes from the page (data-label-* attributes,
// data/ui.tsv) or from kbq's answer.
(function () {
  "use strict";
  var script = document.currentScript;
  var base = script ? script.src.replace(/[^/]*$/, "") + "finder/" : "_static/finder/";

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function getJSON(url) {
    return fetch(url).then(function (r) {
      if (!r.ok) throw new Error(url + ": " + r.status);
      return r.json();
    });
  }

  function labelled(root, key) { return root.getAttribute("data-label-" + key) || key; }

  function select(id, label, options) {
    var wrap = el("label", { "class": "kbq-finder-field" });
    wrap.appendChild(el("span", {}, label));
    var s = el("select", { id: id });
    options.forEach(function (o) { s.appendChild(el("option", { value: o[0] }, o[1])); });
    wrap.appendChild(s);
    return { wrap: wrap, select: s };
  }

  function show(root, out, rec, index) {
    out.innerHTML = "";
    out.appendChild(el("p", { id: "kbq-finder-question", "class": "kbq-finder-question" }, rec.question));
    if (rec.exit === 2) {
      out.appendChild(el("p", { id: "kbq-finder-error" }, rec.error));
      return;
    }
    if (rec.verdict === "not_possible") {
      out.appendChild(el("p", { id: "kbq-finder-need", "class": "kbq-finder-need" },
        labelled(root, "need").replace("{gpus}", rec.min_gpus)));
    } else if (rec.verdict === "no_match") {
      out.appendChild(el("p", { id: "kbq-finder-nomatch" }, rec.no_match || labelled(root, "no_match")));
    }
    if (rec.recipe) {
      var dl = el("dl", { "class": "kbq-finder-answer" });
      var hw = (index.hardware.filter(function (h) { return h.key === rec.layout.hardware; })[0] || {}).name || rec.layout.hardware;
      var L = rec.layout;
      var rows = [
        ["recipe", "kbq-finder-recipe", rec.recipe],
        ["layout", "kbq-finder-layout", L.gpus + " \u00d7 " + hw + " \u2014 TP " + L.tp + " \u00b7 PP " + L.pp + " \u00b7 CP " + L.cp +
          " \u00b7 EP " + L.ep + " \u00b7 DP " + L.dp],
        ["memory", "kbq-finder-memory", rec.memory_gib === null || rec.memory_gib === undefined ? "" : rec.memory_gib.toFixed(1)]
      ];
      rows.forEach(function (r) {
        dl.appendChild(el("dt", {}, labelled(root, r[0])));
        dl.appendChild(el("dd", { id: r[1] }, r[2]));
      });
      out.appendChild(dl);
      out.appendChild(el("p", { "class": "kbq-finder-heading" }, labelled(root, "command")));
      out.appendChild(el("pre", { id: "kbq-finder-command" }, rec.command));
      if (rec.caveats && rec.caveats.length) {
        out.appendChild(el("p", { "class": "kbq-finder-heading" }, labelled(root, "caveats")));
        var ul = el("ul", { id: "kbq-finder-caveats" });
        rec.caveats.forEach(function (c) { ul.appendChild(el("li", {}, c)); });
        out.appendChild(ul);
      }
    }
    var det = el("details", {});
    det.appendChild(el("summary", {}, labelled(root, "answer")));
    det.appendChild(el("pre", { id: "kbq-finder-text" }, rec.text));
    out.appendChild(det);
  }

  function start(root) {
    var lang = root.getAttribute("data-lang");
    var out = el("div", { id: "kbq-finder-out", "class": "kbq-finder-out" });
    var cache = {};
    Promise.all([getJSON(base + "index.json"), getJSON(base + "examples.json")]).then(function (loaded) {
      var index = loaded[0], examples = loaded[1];
      var form = el("div", { "class": "kbq-finder-form" });
      var model = select("kbq-finder-model", labelled(root, "model"), index.models.map(function (m) { return [m.key, m.name]; }));
      var mode = select("kbq-finder-mode", labelled(root, "mode"), []);
      var gpus = select("kbq-finder-gpus", labelled(root, "gpus"), index.gpu_counts.map(function (n) { return [String(n), String(n)]; }));
      var hw = select("kbq-finder-hardware", labelled(root, "hardware"), index.hardware.map(function (h) { return [h.key, h.name]; }));
      var ex = select("kbq-finder-example", labelled(root, "examples"),
        [["", "\u2014"]].concat(examples.map(function (e, i) { return [String(i), e.question]; })));
      [model, mode, gpus, hw].forEach(function (f) { form.appendChild(f.wrap); });
      form.appendChild(ex.wrap);
      root.appendChild(form);
      root.appendChild(out);

      function modes() {
        var m = index.models.filter(function (x) { return x.key === model.select.value; })[0];
        var keep = mode.select.value;
        mode.select.innerHTML = "";
        m.modes.forEach(function (k) { mode.select.appendChild(el("option", { value: k }, index.mode_words[lang][k] || k)); });
        if (m.modes.indexOf(keep) >= 0) mode.select.value = keep;
      }
      function ask() {
        var m = index.models.filter(function (x) { return x.key === model.select.value; })[0];
        var q = index.question.replace("{mode}", mode.select.value).replace("{model}", m.question)
          .replace("{gpus}", gpus.select.value).replace("{hardware}", hw.select.value);
        root.setAttribute("data-state", "loading");
        out.textContent = labelled(root, "loading");
        var got = cache[m.key] ? Promise.resolve(cache[m.key]) : getJSON(base + m.key + ".json");
        got.then(function (answers) {
          cache[m.key] = answers;
          show(root, out, answers[q], index);
          root.setAttribute("data-state", "ready");
          root.setAttribute("data-question", q);
        });
      }
      model.select.addEventListener("change", function () { modes(); ask(); });
      [mode, gpus, hw].forEach(function (f) { f.select.addEventListener("change", ask); });
      ex.select.addEventListener("change", function () {
        if (ex.select.value === "") return;
        var rec = examples[Number(ex.select.value)];
        show(root, out, rec, index);
        root.setAttribute("data-state", "ready");
        root.setAttribute("data-question", rec.question);
      });
      modes();
      ask();
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var root = document.getElementById("kbq-finder");
    if (root) start(root);
  });
})();
