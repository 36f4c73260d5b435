// The site's own script (docs/site.md): the copy button's words in the
// page's language. sphinx-copybutton 0.4 knows en, fr, de, es, ru and zh-CN
// only; this runs before its buttons are made (both load in <head>, the
// buttons on DOMContentLoaded) and gives it the words of data/ui.tsv.
(function () {
  "use strict";
  function meta(name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute("content") : "";
  }
  var copy = meta("kbq-copy"), copied = meta("kbq-copied");
  if (typeof messages === "undefined" || !copy) return;
  var lang = document.documentElement.lang || "en";
  messages[lang] = { copy: copy, copy_to_clipboard: copy, copy_success: copied, copy_failure: copy };
  locale = lang;  // sphinx-copybutton's global
})();
