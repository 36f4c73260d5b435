// The search page's recipe index (docs/site.md, "Search"). Sphinx's scorer
// gives every page that has a word of the question in its title the same
// score, so "llama3 8b sft" lists llama31_405b_sft_config as readily as
// llama3_8b_sft_config. Above Sphinx's results this lists the recipes whose
// words the question names most: the parts of the recipe's name and the
// words of its mode in the page's language (generated/site/recipe-search.json,
// from data/lexicon.tsv). A word that most recipes share ("config") names
// none of them and is not counted.
(function () {
  "use strict";
  var MAX_SHOWN = 5;

  function tokens(q) {
    return q.toLowerCase().split(/[\s,;:!?()\[\]、。，；：！？（）]+/).filter(Boolean);
  }

  // How many of the question's words name the recipe, and how many words of
  // its name the question leaves out (fewer is the closer match).
  function score(r, toks, pairs, q, common) {
    var used = {}, named = 0, parts = 0, mode = false;
    function take(word) {
      if (common[word]) return false;
      for (var i = 0; i < toks.length; i++) if (!used[i] && toks[i] === word) { used[i] = true; return true; }
      for (var j = 0; j < pairs.length; j++) if (!used[j] && !used[j + 1] && pairs[j] === word) { used[j] = used[j + 1] = true; return true; }
      // A word of a language written without spaces (事前学習, 微调), or of several
      // words ("fine tune"), is found inside the question.
      return /[^\x00-\x7f]|\s/.test(word) && q.indexOf(word) >= 0;
    }
    r.parts.forEach(function (p) { if (take(p)) { named++; parts++; } });
    if (!parts) return null;
    r.modes.forEach(function (m) { if (!mode && take(m)) { named++; mode = true; } });
    var left = r.parts.filter(function (p) { return !common[p]; }).length - parts;
    return { named: named, left: left };
  }

  function rank(index, q) {
    var toks = tokens(q), pairs = [];
    for (var i = 0; i + 1 < toks.length; i++) pairs.push(toks[i] + toks[i + 1]);
    var df = {};
    index.forEach(function (r) { r.parts.forEach(function (p) { df[p] = (df[p] || 0) + 1; }); });
    var common = {};
    Object.keys(df).forEach(function (p) { if (df[p] * 2 > index.length) common[p] = true; });
    var hits = [];
    index.forEach(function (r) {
      var s = score(r, toks, pairs, q.toLowerCase(), common);
      if (s) hits.push({ r: r, s: s });
    });
    hits.sort(function (a, b) {
      return b.s.named - a.s.named || a.s.left - b.s.left || (a.r.name < b.r.name ? -1 : a.r.name > b.r.name ? 1 : 0);
    });
    return hits.slice(0, MAX_SHOWN);
  }

  // Sphinx 5.3 looks the end-of-search sentence up after filling in the
  // count, so no catalog translates it ("Search finished, found 12
  // page(s)..." on every language's page): once the search has finished,
  // the sentence is replaced by the language's own (data/ui.tsv).
  function translateSummary(box) {
    var words = box.getAttribute("data-found");
    var results = document.getElementById("search-results");
    if (!words || !results || typeof Documentation === "undefined") return;
    var observer = new MutationObserver(function () {
      var title = results.querySelector("h2");
      var status = results.querySelector("p.search-summary");
      if (!title || !status || status.getAttribute("data-kbq") === "done") return;
      if (title.textContent !== Documentation.gettext("Search Results")) return;  // still searching
      var n = results.querySelectorAll("ul.search > li").length;
      if (!n) return;  // "no match" is translated by Sphinx
      status.setAttribute("data-kbq", "done");
      status.textContent = words.replace("{n}", String(n));
    });
    observer.observe(results, { childList: true, subtree: true, characterData: true });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("kbq-recipe-hits");
    if (box) translateSummary(box);
    var q = new URLSearchParams(window.location.search).get("q");
    if (!box || !q) return;
    fetch(box.getAttribute("data-index")).then(function (r) { return r.json(); }).then(function (index) {
      var hits = rank(index, q);
      if (!hits.length) {
        box.setAttribute("data-state", "none");  // searched: no recipe named (the tests wait for a state)
        return;
      }
      var h = document.createElement("h2");
      h.textContent = box.getAttribute("data-label");
      box.appendChild(h);
      var ul = document.createElement("ul");
      ul.className = "kbq-recipe-hits";
      hits.forEach(function (hit) {
        var li = document.createElement("li"), a = document.createElement("a");
        a.href = hit.r.page;  // relative to search.html, at the root of the language's build
        a.textContent = hit.r.name;
        li.appendChild(a);
        ul.appendChild(li);
      });
      box.appendChild(ul);
      box.setAttribute("data-state", "ready");
    });
  });
})();
