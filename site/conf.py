# Sphinx configuration of the documentation site built from generated/
# (docs/site.md). One build per language: `make site` passes the language
# as -D language=<code> ... and the environment variable KBQ_SITE_LANG; the
# source folder is generated/, the pages of that language are the ones
# built (English pages have no language suffix, the others end in
# .<lang>.md), every other page is excluded.
import os
import pathlib
import re

project = "Megatron Bridge recipes"
author = "kbq"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}

_lang = os.environ.get("KBQ_SITE_LANG", "en")
_langs = [l for l in os.environ.get("KBQ_SITE_LANGS", "en fr ja zh").split() if l]
language = _lang
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
html_theme = "alabaster"
html_static_path = [str(pathlib.Path(__file__).parent / "static")]
html_js_files = ["finder.js"]
html_css_files = ["finder.css"]
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


def setup(app):
    _split_identifiers()
