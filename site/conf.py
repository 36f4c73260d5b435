# Sphinx configuration of the documentation site built from generated/
# (docs/site.md). One build per language: `make site` passes the language
# as -D language=<code> ... and the environment variable KBQ_SITE_LANG; the
# source folder is generated/, the pages of that language are the ones
# built (English pages have no language suffix, the others end in
# .<lang>.md), every other page is excluded.
import json
import os
import pathlib
import re

project = "Megatron Bridge recipes"
author = "kbq"
# Megatron Bridge's docs/conf.py loads myst_parser, sphinx_copybutton and
# nvidia_sphinx_theme (built on pydata-sphinx-theme). Debian 12 has the first
# two and no NVIDIA theme; its pydata-sphinx-theme is 0.7 (2021), so the site
# uses Debian's furo, responsive down to a phone's width (docs/site.md).
extensions = ["myst_parser", "sphinx_copybutton"]
source_suffix = {".md": "markdown"}

_lang = os.environ.get("KBQ_SITE_LANG", "en")
_langs = [l for l in os.environ.get("KBQ_SITE_LANGS", "en fr ja zh").split() if l]
# Sphinx's locale for the language (its own interface strings, translated
# by Debian's sphinx-common catalogs): Chinese is zh_CN there.
_SPHINX_LOCALE = {"zh": "zh_CN"}
language = _SPHINX_LOCALE.get(_lang, _lang)
_suffix = "" if _lang == "en" else "." + _lang
root_doc = "site/index" + _suffix

_src = pathlib.Path(os.environ.get("KBQ_SITE_SRC", pathlib.Path(__file__).resolve().parent.parent / "generated"))


def _suffix_lang(path):
    stem = path.name[: -len(".md")]
    for l in _langs:
        if stem.endswith("." + l):
            return l
    return None


def _page_lang(path):
    return _suffix_lang(path) or "en"


def _shared(path):
    """A page written once for every language (translation-status.md): no
    language suffix and no sibling in another language."""
    stem = path.name[: -len(".md")]
    return _suffix_lang(path) is None and not any(path.with_name(f"{stem}.{l}.md").exists() for l in _langs)


exclude_patterns = sorted(
    str(p.relative_to(_src)) for p in _src.rglob("*.md") if _page_lang(p) != _lang and not _shared(p)
) + ["site/answers/**", "**/kb.json"]

myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
html_theme = "furo"
# The announcement bar holds the language switcher (site/templates/page.html).
html_theme_options = {"announcement": "kbq-langs"}
html_static_path = [str(pathlib.Path(__file__).parent / "static")]
templates_path = [str(pathlib.Path(__file__).parent / "templates")]
html_js_files = ["site.js", "finder.js"]
html_css_files = ["finder.css", "site.css"]
html_show_sphinx = False
html_permalinks_icon = "#"
# The theme's strings that Sphinx's catalogs lack ("Back to top", "On this
# page"): a catalog written by site/build.py from generated/site/ui.json.
locale_dirs = [os.environ["KBQ_SITE_LOCALE"]] if os.environ.get("KBQ_SITE_LOCALE") else []
gettext_auto_build = True
# Copy buttons on every code block; the prompt and output of a shell
# session are not copied.
copybutton_prompt_text = r"\$ "
copybutton_prompt_is_regexp = True
html_search_language = _lang
if _lang == "zh":
    html_search_options = {"dict": os.environ.get("KBQ_JIEBA_DICT", "")} if os.environ.get("KBQ_JIEBA_DICT") else {}
html_copy_source = False
html_show_sourcelink = False
suppress_warnings = []


def _split_identifiers():
    """Index recipe names by their parts: the search language's splitter
    keeps "llama3_70b_pretrain_config" whole; the site also indexes llama3,
    70b, pretrain, config, so that "llama3 70b pretrain" finds the page."""
    import importlib

    from sphinx import search

    cls = search.languages.get(_lang, search.SearchEnglish)
    if isinstance(cls, str):
        module, name = cls.rsplit(".", 1)
        cls = getattr(importlib.import_module(module), name)
        search.languages[_lang] = cls
    if getattr(cls, "_kbq_split", False):
        return
    plain = cls.split

    def split(self, text):
        # The language's own words, then every run of word characters as
        # written (a Japanese query "事前学習" is one word of the query, while
        # the segmenter indexes 事前 and 学習), then the parts of identifiers.
        out = list(plain(self, text))
        for w in re.findall(r"\w+", text):
            out.append(w)
            if "_" in w:
                out.extend(p for p in w.split("_") if p)
        return out

    cls.split = split
    cls._kbq_split = True


def _ui():
    path = _src / "site" / "ui.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


_UI = _ui()
html_title = _UI.get(_lang, {}).get("site.name", project)


def _docname_in(docname, lang):
    """The page `docname` (of this build's language) in `lang`, or None:
    `x` (English) and `x.<lang>`, the skill's `SKILL.<lang>` in every
    language, a page written once for all languages itself."""
    base = docname
    for l in _langs:
        if base.endswith("." + l):
            base = base[: -len(l) - 1]
            break
    for cand in (f"{base}.{lang}", base if lang == "en" else None):
        if cand and (_src / (cand + ".md")).exists() and (cand == f"{base}.{lang}" or not _suffix_lang(_src / (cand + ".md"))):
            return cand
    if (_src / (base + ".md")).exists() and _shared(_src / (base + ".md")):
        return base
    return None


def _switcher(app, pagename, templatename, context, doctree):
    """The language switcher: the same page in every language, as a link
    relative to this page (each language is built into its own folder,
    <out>/<lang>/), or that language's site index when the page has no
    edition there (search, genindex)."""
    depth = pagename.count("/")
    up = "../" * (depth + 1)
    links = []
    for lang in _langs:
        other = _docname_in(pagename, lang)
        if other is None:
            other = "site/index" + ("" if lang == "en" else "." + lang)
        words = _UI.get(lang, {})
        links.append({"lang": lang, "name": words.get("name", lang), "current": lang == _lang,
                      "href": f"{up}{lang}/{other}.html"})
    context["kbq_langs"] = links
    context["kbq_languages_label"] = _UI.get(_lang, {}).get("site.languages", "")
    context["kbq_root"] = up + "index.html"
    context["kbq_search_found"] = _UI.get(_lang, {}).get("site.search_found", "")
    context["kbq_recipes_label"] = _UI.get(_lang, {}).get("site_title", "")
    context["kbq_copy"] = _UI.get(_lang, {}).get("theme.copy", "")
    context["kbq_copied"] = _UI.get(_lang, {}).get("theme.copied", "")


def setup(app):
    _split_identifiers()
    app.connect("html-page-context", _switcher)
