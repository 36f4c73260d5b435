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

  // kbq's figures as its answers print them (query/render: format_count,
  // format_seconds, format_duration) and its labels' {name} placeholders.
  function count(v) {
    var units = [[1e15, " P"], [1e12, " T"], [1e9, " B"], [1e6, " M"]];
    for (var i = 0; i < units.length; i++) {
      if (v >= units[i][0]) {
        var x = v / units[i][0];
        return x.toFixed(x >= 100 ? 0 : x >= 10 ? 1 : 2) + units[i][1];
      }
    }
    return v.toFixed(0);
  }
  function seconds(s) { return s.toFixed(s >= 100 ? 0 : s >= 10 ? 1 : 2); }
  function fill(text, vars) {
    return text.replace(/\{(\w+)\}/g, function (m, k) { return Object.prototype.hasOwnProperty.call(vars, k) ? vars[k] : m; });
  }
  function duration(root, s) {
    if (s >= 86400) return fill(labelled(root, "unit_days"), { n: (s / 86400).toFixed(s >= 8640000 ? 0 : 1) });
    return fill(labelled(root, "unit_hours"), { n: (s / 3600).toFixed(1) });
  }
  // The throughput line of kbq's text answer: measured, estimated with its
  // band and how, or no estimate with the reason.
  function throughputLine(root, t) {
    if (!t) return "";
    if (t.basis === "none") return t.how ? fill(labelled(root, "line_throughput_none"), { why: t.how }) : "";
    return fill(labelled(root, t.basis === "measured" ? "line_throughput" : "line_throughput_estimated"), {
      tokens: count(t.tokens_per_s_per_gpu), job: count(t.tokens_per_s), step: seconds(t.step_time_s),
      band: t.error_band_pct.toFixed(1), how: t.how
    });
  }
  // The time to train a budget at the answer's job tokens/s, as kbq computes
  // it; unknown, as kbq says, when there is no throughput.
  function timeLine(root, t, budget) {
    if (!budget) return "";
    if (!t || t.basis === "none" || !(t.tokens_per_s > 0)) return fill(labelled(root, "line_time_to_train_unknown"), { tokens: count(budget.tokens) });
    return fill(labelled(root, "line_time_to_train"), { tokens: count(budget.tokens), duration: duration(root, budget.tokens / t.tokens_per_s) });
  }

  function select(id, label, options) {
    var wrap = el("label", { "class": "kbq-finder-field" });
    wrap.appendChild(el("span", {}, label));
    var s = el("select", { id: id });
    options.forEach(function (o) { s.appendChild(el("option", { value: o[0] }, o[1])); });
    wrap.appendChild(s);
    return { wrap: wrap, select: s };
  }

  // One plan of kbq's answer: the recipe (a link to its page), the layout,
  // the memory per GPU, the command and the caveats. `ids` says whether the
  // elements carry the ids the site test reads (the plan the page leads with).
  function plan(root, rec, index, ids, budget) {
    var box = el("div", { "class": "kbq-finder-plan" });
    var id = function (name) { return ids ? { id: name } : {}; };
    var dl = el("dl", { "class": "kbq-finder-answer" });
    var hw = (index.hardware.filter(function (h) { return h.key === rec.layout.hardware; })[0] || {}).name || rec.layout.hardware;
    var L = rec.layout;
    dl.appendChild(el("dt", {}, labelled(root, "recipe")));
    var dd = el("dd", id("kbq-finder-recipe"));
    if (rec.page) dd.appendChild(el("a", { href: rec.page }, rec.recipe)); else dd.textContent = rec.recipe;
    dl.appendChild(dd);
    var rows = [
      ["layout", "kbq-finder-layout", L.gpus + " \u00d7 " + hw + " \u2014 TP " + L.tp + " \u00b7 PP " + L.pp + " \u00b7 CP " + L.cp +
        " \u00b7 EP " + L.ep + " \u00b7 DP " + L.dp],
      ["memory", "kbq-finder-memory", rec.memory_gib === null || rec.memory_gib === undefined ? "" : rec.memory_gib.toFixed(1)]
    ];
    var tline = throughputLine(root, rec.throughput);
    if (tline) rows.push(["throughput", "kbq-finder-throughput", tline]);
    var ttt = timeLine(root, rec.throughput, budget);
    if (ttt) rows.push(["time_to_train", "kbq-finder-time", ttt]);
    rows.forEach(function (r) {
      dl.appendChild(el("dt", {}, labelled(root, r[0])));
      dl.appendChild(el("dd", id(r[1]), r[2]));
    });
    box.appendChild(dl);
    box.appendChild(el("p", { "class": "kbq-finder-heading" }, labelled(root, "command")));
    // The same markup as a code block of the pages, so sphinx-copybutton's
    // style applies; the button itself is added here (the page's buttons are
    // made once, on load).
    var hl = el("div", { "class": "highlight kbq-finder-command" });
    var pre = el("pre", id("kbq-finder-command"), rec.command);
    hl.appendChild(pre);
    var btn = el("button", { "class": "kbq-copy", type: "button" }, labelled(root, "copy"));
    btn.addEventListener("click", function () {
      if (navigator.clipboard) navigator.clipboard.writeText(rec.command);
      btn.textContent = labelled(root, "copied");
      setTimeout(function () { btn.textContent = labelled(root, "copy"); }, 2000);
    });
    hl.appendChild(btn);
    box.appendChild(hl);
    if (rec.caveats && rec.caveats.length) {
      box.appendChild(el("p", { "class": "kbq-finder-heading" }, labelled(root, "caveats")));
      var ul = el("ul", id("kbq-finder-caveats"));
      rec.caveats.forEach(function (c) { ul.appendChild(el("li", {}, c)); });
      box.appendChild(ul);
    }
    return box;
  }

  // kbq's answer. When the choice is not possible, the page leads with the
  // first alternative kbq proposes that runs (answered in full when the site
  // was built), and shows the failing plan below it.
  function show(root, out, rec, index, budget) {
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
    if (rec.verdict === "not_possible" && rec.works) {
      var works = el("section", { id: "kbq-finder-works", "class": "kbq-finder-works" });
      works.appendChild(el("h3", {}, labelled(root, "works")));
      works.appendChild(el("p", { id: "kbq-finder-works-why" }, rec.works.why));
      works.appendChild(plan(root, rec.works, index, false, budget));
      out.appendChild(works);
    }
    if (rec.recipe) {
      var mine = el("section", { id: "kbq-finder-asked", "class": rec.verdict === "not_possible" ? "kbq-finder-failing" : "" });
      if (rec.verdict === "not_possible") mine.appendChild(el("h3", {}, labelled(root, "failing")));
      mine.appendChild(plan(root, rec, index, true, budget));
      out.appendChild(mine);
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
      var budgets = index.budgets || [];
      var bud = select("kbq-finder-budget", labelled(root, "budget"),
        [["", "\u2014"]].concat(budgets.map(function (b) { return [b.key, b.shown]; })));
      function budget() { return budgets.filter(function (b) { return b.key === bud.select.value; })[0] || null; }
      [model, mode, gpus, hw].forEach(function (f) { form.appendChild(f.wrap); });
      if (budgets.length) form.appendChild(bud.wrap);
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
          var b = budget();
          show(root, out, answers[q], index, b);
          root.setAttribute("data-state", "ready");
          // The question the answer stands for, its budget included.
          root.setAttribute("data-question", b ? q + " " + index.budget_question.replace("{budget}", b.key) : q);
        });
      }
      function chosen() { ex.select.value = ""; ask(); }
      model.select.addEventListener("change", function () { modes(); chosen(); });
      [mode, gpus, hw].forEach(function (f) { f.select.addEventListener("change", chosen); });
      // The selects say what an answer is: its model, mode, GPU count and
      // type (the nearest offered count at or above its own).
      function pick(rec) {
        if (!rec || !rec.recipe) return false;
        var m = index.models.filter(function (x) { return x.name === rec.model && x.modes.indexOf(rec.mode) >= 0; })[0];
        if (!m) return false;
        model.select.value = m.key;
        modes();
        mode.select.value = rec.mode;
        var n = index.gpu_counts.filter(function (c) { return c >= rec.layout.gpus; })[0];
        if (n !== undefined) gpus.select.value = String(n);
        if (index.hardware.some(function (h) { return h.key === rec.layout.hardware; })) hw.select.value = rec.layout.hardware;
        return true;
      }
      ex.select.addEventListener("change", function () {
        if (ex.select.value === "") return;
        var rec = examples[Number(ex.select.value)];
        pick(rec);
        show(root, out, rec, index, null);
        root.setAttribute("data-state", "ready");
        root.setAttribute("data-question", rec.question);
      });
      // A budget answers the same question with its time to train: the
      // example shown, or the choices' answer.
      bud.select.addEventListener("change", function () {
        if (ex.select.value !== "") {
          var rec = examples[Number(ex.select.value)];
          var b = budget();
          show(root, out, rec, index, b);
          root.setAttribute("data-question", b ? rec.question + " " + index.budget_question.replace("{budget}", b.key) : rec.question);
          return;
        }
        ask();
      });
      // The default: the quick reference's first pick (the first example).
      if (!pick(examples.filter(function (e) { return e.verdict === "ok"; })[0])) modes();
      ask();
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var root = document.getElementById("kbq-finder");
    if (root) start(root);
  });
})();
