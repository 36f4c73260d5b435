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

import sphinx
from docutils import nodes
from sphinx import addnodes
from sphinx.environment.adapters.toctree import TocTree
from sphinx.util import url_re

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


# Another language's pages by their suffix (one pattern per language), and,
# for a language other than English, the English pages by name: Sphinx
# compiles the list again for every toctree, and one pattern per page of the
# other languages (450) cost a few percent of the build.
exclude_patterns = (
    [f"**.{l}.md" for l in _langs if l != _lang and l != "en"]
    + sorted(str(p.relative_to(_src)) for p in _src.rglob("*.md") if _page_lang(p) == "en" != _lang and not _shared(p))
    + ["site/answers/**", "**/kb.json"]
)

myst_heading_anchors = 3
# The pages' text as kbc wrote it: docutils' "smart quotes" would turn the
# flags written in prose ("--recipe", "--dataset squad") into an en dash
# and a word, and quoted code (NotImplementedError('...')) into curly
# quotes, which a reader copies and the launcher or a search rejects. It
# also cost a tenth of each language's Sphinx time (docs/performance.md).
smartquotes = False
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
    # The words of each text, kept: the same cell text comes again and
    # again (recipe names, values, the same notes), and the Japanese
    # splitter (Sphinx's TinySegmenter, pure Python) cost a third of a
    # Japanese build; 4 290 distinct texts among 35 591 (docs/performance.md).
    done = {}

    def split(self, text):
        # The language's own words, then every run of word characters as
        # written (a Japanese query "事前学習" is one word of the query, while
        # the segmenter indexes 事前 and 学習), then the parts of identifiers.
        if text in done:
            return list(done[text])
        out = list(plain(self, text))
        for w in re.findall(r"\w+", text):
            out.append(w)
            if "_" in w:
                out.extend(p for p in w.split("_") if p)
        done[text] = tuple(out)
        return out

    cls.split = split
    cls._kbq_split = True
    # Sphinx 5.3's Chinese search (sphinx/search/zh.py) keeps every Latin
    # word it met in a list, latin_terms, and asks `word in latin_terms` for
    # each word it stems: a scan of a list that grows to some 200 000 words
    # (3 of a Chinese build's 27 s). The same list, with a set beside it
    # for `in`.
    if isinstance(getattr(cls, "latin_terms", None), list) and not isinstance(cls.latin_terms, _TermList):
        cls.latin_terms = _TermList(cls.latin_terms)


class _TermList(list):
    """A list whose `in` is a set's."""

    def __init__(self, items=()):
        super().__init__(items)
        self._set = set(self)

    def append(self, item):
        super().append(item)
        self._set.add(item)

    def extend(self, items):
        items = list(items)
        super().extend(items)
        self._set.update(items)

    def __contains__(self, item):
        return item in self._set


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


# The sidebar's navigation: furo asks every page for the whole site's toctree
# (collapse=False, titles_only=True, maxdepth=-1, includehidden=True), and
# Sphinx resolves it again for each page, deep-copying the table of contents
# of every page: some 40% of a language's build, for a tree that differs
# from page to page only in the marks of the current page and in the
# relative links. The tree is resolved once per build, its references left as
# docnames; each page copies it and does what Sphinx 5.3's
# TocTree.resolve/get_toctree_for do last: mark the page's entries, merge
# the root's toctrees, make the links relative. Any other call, another
# Sphinx, and any surprise, go to Sphinx's own toctree.
_FURO_NAV = {"collapse": False, "titles_only": True, "maxdepth": -1, "includehidden": True}
_nav_trees = []


class _DocnameLinks:
    """The HTML builder, except that get_relative_uri returns the target
    docname: the resolved tree keeps its references as docnames."""

    def __init__(self, builder):
        self._builder = builder

    def __getattr__(self, name):
        return getattr(self._builder, name)

    def get_relative_uri(self, from_, to, typ=None):
        return to


def _resolve_nav(app):
    """The root document's toctrees resolved as furo asks, for no page
    (nothing marked current), references as docnames (url_re tells an
    external link, left as is by Sphinx, from a page's)."""
    trees = []
    for node in app.env.get_doctree(app.config.root_doc).findall(addnodes.toctree):
        tree = TocTree(app.env).resolve("\0", _DocnameLinks(app.builder), node, prune=True, maxdepth=-1,
                                        titles_only=True, collapse=False, includehidden=True)
        if tree:
            for ref in tree.findall(nodes.reference):
                # Sphinx made it docname + anchorname.
                uri, anchor = ref["refuri"], ref["anchorname"]
                if not url_re.match(uri) and anchor:
                    if not uri.endswith(anchor):
                        raise ValueError(uri)
                    ref["refuri"] = uri[: -len(anchor)]
            trees.append(tree)
    return trees


def _mark_current(node, docname):
    """The marks of Sphinx 5.3's _toctree_add_classes (TocTree.resolve) on
    a tree that has its toctree-l<n> classes: class current on the branch
    of each entry of `docname`, iscurrent on its items, same traversal."""
    for sub in node.children:
        if isinstance(sub, (addnodes.compact_paragraph, nodes.list_item, nodes.bullet_list)):
            _mark_current(sub, docname)
        elif isinstance(sub, nodes.reference) and sub["refuri"] == docname:
            if not sub["anchorname"]:
                branch = sub
                while branch:
                    branch["classes"].append("current")
                    branch = branch.parent
            if sub.parent.parent.get("iscurrent"):
                return
            while sub:
                sub["iscurrent"] = True
                sub = sub.parent


def _resolved_nav(app):
    """_resolve_nav's trees, once per build (copy them before a change)."""
    if not _nav_trees:
        _nav_trees.append([])  # a failure is not retried on every page
        _nav_trees[0] = _resolve_nav(app)
    return _nav_trees[0]


def _nav_toctree(app, pagename, templatename, context, doctree):
    """Before furo's handler (priority 400 < 500): the page's toctree
    function answers furo's call from the tree resolved once."""
    if "toctree" not in context:
        return
    sphinx_toctree = context["toctree"]

    def toctree(**kwargs):
        if kwargs != _FURO_NAV or sphinx.version_info[:2] != (5, 3):
            return sphinx_toctree(**kwargs)
        try:
            trees = [t.deepcopy() for t in _resolved_nav(app)]
            if not trees:
                return sphinx_toctree(**kwargs)
            for tree in trees:
                _mark_current(tree, pagename)
            for tree in trees[1:]:
                trees[0].extend(tree.children)
            for ref in trees[0].findall(nodes.reference):
                if not url_re.match(ref["refuri"]):
                    ref["refuri"] = app.builder.get_relative_uri(pagename, ref["refuri"]) + ref["anchorname"]
            return app.builder.render_partial(trees[0])["fragment"]
        except Exception:
            return sphinx_toctree(**kwargs)

    context["toctree"] = toctree


# furo's sidebar, the rest of it. furo hands the toctree's HTML to
# BeautifulSoup for every page (furo/navigation.py: a checkbox and a label
# for every entry with children, "checked" on the current branch,
# "current-page" on the current entry), which parses and writes some 33 KB a
# page, each page's HTML different. Here that pass runs once per build, on
# the tree of no page with placeholder links; each page sets its links
# (relative to it) and its current branch on the parsed tree, writes it out
# and undoes what it set. A page the tree lists more than once, an element
# on its branch that this does not know, another furo or Sphinx, or any
# error, go to furo's own pass. Every _NAV_CHECK_EVERY-th page is also
# computed furo's own way, and a difference stops the build.
_FURO_VERSION = "2022.12.07"
# tests/site/check_nav.py checks every page (1); KBQ_SITE_NAV_STATS names
# a file the build writes its counts to (pages from the template, from
# furo's own pass, checked).
_NAV_CHECK_EVERY = max(1, int(os.environ.get("KBQ_SITE_NAV_CHECK_EVERY", "16") or 16))
_nav_stats = {"template": 0, "furo": 0, "checked": 0}
_NAV_LINK = "kbq-nav-link:"
_nav_template = []
_nav_pages = [0]  # pages written so far: every _NAV_CHECK_EVERY-th is checked, the first too


class _NavTemplate:
    def __init__(self, app):
        from bs4 import BeautifulSoup
        from furo.navigation import get_navigation_tree

        trees = [t.deepcopy() for t in _resolved_nav(app)]
        if not trees:
            raise LookupError("no toctree")
        for tree in trees[1:]:
            trees[0].extend(tree.children)
        targets = []
        for ref in trees[0].findall(nodes.reference):
            if not url_re.match(ref["refuri"]):
                targets.append((ref["refuri"], ref["anchorname"]))
                ref["refuri"] = f"{_NAV_LINK}{len(targets) - 1}"
        html = app.builder.render_partial(trees[0])["fragment"]
        self.soup = BeautifulSoup(get_navigation_tree(html), "html.parser")
        self.links = []
        self.by_doc = {}
        for a in self.soup.find_all("a"):
            href = a.get("href", "")
            if href.startswith(_NAV_LINK):
                doc, anchor = targets[int(href[len(_NAV_LINK):])]
                self.links.append((a, doc, anchor))
                if not anchor:
                    self.by_doc.setdefault(doc, []).append(a)
        if len(self.links) != len(targets):
            raise LookupError("links lost")

    def page(self, app, pagename):
        """furo's navigation tree for `pagename`, or None for furo's own."""
        refs = self.by_doc.get(pagename, [])
        if len(refs) > 1:
            return None
        undo = []

        def put(tag, attr, value):
            undo.append((tag, attr, tag.attrs.get(attr)))
            tag[attr] = value

        try:
            for a, doc, anchor in self.links:
                put(a, "href", (app.builder.get_relative_uri(pagename, doc) + anchor) or "#")
            if refs:
                a = refs[0]
                put(a, "class", ["current"] + list(a.get("class", [])))
                node, innermost = a.parent, None
                while node is not None and node is not self.soup:
                    classes = list(node.get("class", []))
                    if node.name == "li":
                        at = classes.index("has-children") if "has-children" in classes else len(classes)
                        put(node, "class", classes[:at] + ["current"] + classes[at:])
                        box = node.find("input", recursive=False)
                        if box is not None:
                            put(box, "checked", "")
                        innermost = innermost or node
                    elif node.name == "ul":
                        put(node, "class", classes + ["current"])
                    else:
                        return None
                    node = node.parent
                if innermost is not None:
                    innermost["class"].append("current-page")
            return str(self.soup)
        finally:
            for tag, attr, value in reversed(undo):
                if value is None:
                    del tag[attr]
                else:
                    tag[attr] = value


def _furo_nav(app, pagename):
    """The page's navigation tree from the template, or None."""
    if sphinx.version_info[:2] != (5, 3):
        return None
    import furo

    if furo.__version__ != _FURO_VERSION:
        return None
    if not _nav_template:
        _nav_template.append(None)  # a failure is not retried on every page
        try:
            _nav_template[0] = _NavTemplate(app)
        except Exception:
            return None
    template = _nav_template[0]
    if template is None:
        return None
    try:
        return template.page(app, pagename)
    except Exception:
        return None


def _install_furo_nav():
    """furo computes the tree in _compute_navigation_tree(context); a page
    whose context carries kbq_furo_nav is answered from the template."""
    import furo

    own = furo._compute_navigation_tree
    if getattr(own, "_kbq", False):
        return

    def compute(context):
        fast = context.get("kbq_furo_nav")
        html = fast() if fast else None
        if html is None:
            _nav_stats["furo"] += 1
            return own(context)
        _nav_stats["template"] += 1
        if fast.check:
            _nav_stats["checked"] += 1
            theirs = own(context)
            if theirs != html:
                raise RuntimeError(f"site/conf.py: the sidebar of {fast.page} differs from furo's own")
        return html

    compute._kbq = True
    furo._compute_navigation_tree = compute


class _PageNav:
    def __init__(self, app, pagename, check):
        self.app, self.page, self.check = app, pagename, check

    def __call__(self):
        return _furo_nav(self.app, self.page)


def _furo_nav_context(app, pagename, templatename, context, doctree):
    if "toctree" not in context:
        return
    _nav_pages[0] += 1
    context["kbq_furo_nav"] = _PageNav(app, pagename, (_nav_pages[0] - 1) % _NAV_CHECK_EVERY == 0)


def _write_nav_stats(app, exception):
    path = os.environ.get("KBQ_SITE_NAV_STATS")
    if path and exception is None:
        pathlib.Path(path).write_text(json.dumps(_nav_stats, sort_keys=True), encoding="utf-8")


def _keep_doctrees():
    """Each page's doctree kept in memory from its reading to its writing,
    as Sphinx 7 does (its _write_doc_doctree_cache): Sphinx 5.3 pickles
    every doctree when it reads the page and loads the pickle back to write
    it, about a second of each language's build. The pickle is still
    written (a second build reads it); the page is written from the tree
    the reading made, once, and every other reader (the sidebar's root
    document) still loads the pickle."""
    from sphinx.builders import Builder
    from sphinx.environment import BuildEnvironment
    from sphinx.util.docutils import LoggingReporter

    if hasattr(BuildEnvironment, "_write_doc_doctree_cache") or getattr(Builder.write_doctree, "_kbq", False):
        return  # Sphinx 7 keeps them itself
    write = Builder.write_doctree
    resolve = BuildEnvironment.get_and_resolve_doctree

    def write_doctree(self, docname, doctree):
        write(self, docname, doctree)
        # On the builder: the environment is pickled whole after the reading.
        self.__dict__.setdefault("_kbq_doctrees", {})[docname] = doctree

    def get_and_resolve_doctree(self, docname, builder, doctree=None, *args, **kwargs):
        if doctree is None:
            doctree = builder.__dict__.get("_kbq_doctrees", {}).pop(docname, None)
            if doctree is not None:
                doctree.settings.env = self
                doctree.reporter = LoggingReporter(self.doc2path(docname))
        return resolve(self, docname, builder, doctree, *args, **kwargs)

    write_doctree._kbq = True
    Builder.write_doctree = write_doctree
    BuildEnvironment.get_and_resolve_doctree = get_and_resolve_doctree


def setup(app):
    _split_identifiers()
    _keep_doctrees()
    _install_furo_nav()
    app.connect("build-finished", _write_nav_stats)
    app.connect("html-page-context", _furo_nav_context, priority=450)
    app.connect("html-page-context", _switcher)
    app.connect("html-page-context", _nav_toctree, priority=400)
