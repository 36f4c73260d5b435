#!/usr/bin/python3
"""Builds pages `kbc generate` wrote with Sphinx + MyST, configured as the
documentation site is (site/conf.py), and checks that they are inert: the
HTML holds nothing the generator did not write (docs/security.md,
"Generated pages"). Run by the hostile-input cases of tests/test_hostile.cpp
(the `myst:` directive); exit 77 when Sphinx or myst-parser is missing.

What is checked, on every page built from the generated folder:
  - the page body holds only the elements and attributes Markdown itself
    makes (paragraphs, headings, lists, tables, emphasis, code, links to
    pages of the site), and the one element the generator writes as raw
    HTML (the recipe finder's <div id="kbq-finder">); no script, style,
    iframe, image, form, admonition, topic, sidebar, target span, download
    link, event handler or javascript: link;
  - the page head loads only Sphinx's and the site's own scripts;
  - no file of the build machine was included: the canary text (every
    hostile case's sentinel files hold it) is in no output file, and there
    is no _downloads/ or _images/ folder;
  - each --shows text is in the pages' text (whitespace collapsed): MyST
    syntax from the sources is shown as written, not run.

usage: check_myst_inert.py --conf site --src GEN --out DIR [--lang en]
                           [--canary TEXT] [--shows TEXT ...]
"""
import argparse
import html
import html.parser
import os
import pathlib
import re
import subprocess
import sys

# What Sphinx writes for Markdown in a page body (docutils' HTML5 writer).
BODY_TAGS = {
    "section", "div", "h1", "h2", "h3", "h4", "h5", "h6", "p", "a", "ul", "ol", "li", "em", "strong",
    "code", "pre", "span", "table", "colgroup", "col", "thead", "tbody", "tr", "th", "td", "blockquote",
    "hr", "br", "del", "s", "input",
}
# Attributes allowed on those, by tag ("*": any tag).
BODY_ATTRS = {
    "*": {"class"},
    "section": {"id"},
    "a": {"href", "title"},
    "th": {"colspan", "rowspan"},
    "td": {"colspan", "rowspan"},
    "col": {"style"},
    "input": {"type", "disabled", "checked"},
}
# Classes of a div in a body: code blocks (highlight-<language>: the
# language is the source's fence info word, whatever it is), the generator's
# hidden toctrees.
DIV_CLASSES = re.compile(r"^(highlight(-\S+)?|notranslate|toctree-wrapper|compound)$")
# The div furo wraps around every table so that it scrolls in its own box
# (furo's HTML post-processing): exactly these classes. A {container}
# directive makes "docutils container" without "table-wrapper".
FURO_TABLE_WRAPPER = re.compile(r"^table-wrapper( colwidths-(auto|given))? docutils container$")
# Classes that only a directive or a role makes (whole class names).
DIRECTIVE_CLASSES = re.compile(
    r"^(admonition|attention|caution|danger|error|hint|important|note|tip|warning|seealso|todo|topic|sidebar|rubric|"
    r"download|raw|footnote.*|citation.*|math|figure|image|caption-text|literal-block-wrapper|code-block-caption|container|"
    r"dropdown|tab-.*|glossary|versionmodified|deprecated|versionadded|versionchanged|centered|hlist|line-block|epigraph|"
    r"highlights|pull-quote|xref|problematic|system-message|target|guilabel|menuselection|kbd|samp|file|program|option|"
    r"envvar|pep|rfc|std|std-.*|doc|ref|eval-rst|field-list|docinfo|sig.*|py|cpp|c|js|rst)$")
# The finder's element, the one raw HTML the generator writes (compiler/generate/finder.cpp).
FINDER_ATTRS = re.compile(r"^(id|data-lang|data-label-[a-z_]+)$")
HEAD_SCRIPT = re.compile(r"^(\.\./)*_static/(scripts/)?[\w.-]+\.js$")
# The inline scripts of the themes: alabaster's search box, furo's colour
# scheme (light, dark or the system's, from localStorage).
THEME_SCRIPTS = {
    "document.getElementById('searchbox').style.display = \"block\"",
    'document.body.dataset.theme = localStorage.getItem("theme") || "auto";',
}


class Page(html.parser.HTMLParser):
    """The tags of one page: those inside <div class="body"> apart, and its text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        # The page body: alabaster's <div class="body">, furo's <article
        # role="main">; depth counts that tag's nesting inside it (0 = outside).
        self.container = None
        self.depth = 0
        self.body = []  # (tag, attrs) inside the body
        self.scripts = []  # (attrs, has inline code)
        self.text = []
        self._script = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self._script = [a, ""]
            self.scripts.append(self._script)
        if self.depth:
            self.body.append((tag, attrs))
            if tag == self.container:
                self.depth += 1
        elif (tag == "div" and "body" in (a.get("class") or "").split()) or (tag == "article" and a.get("role") == "main"):
            self.container = tag
            self.depth = 1

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag == self.container and self.depth:
            self.depth -= 1

    def handle_endtag(self, tag):
        if tag == "a" and self.depth:
            self.body.append(("/a", []))
        if tag == "script":
            self._script = None
        if tag == self.container and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self._script is not None:
            self._script[1] += data
        if self.depth:
            self.text.append(data)


def problems_of(page, rel):
    out = []
    in_link = []  # the classes of the <a> elements open around this one
    for tag, attrs in page.body:
        a = dict(attrs)
        if tag == "/a":
            in_link = in_link[:-1]
            continue
        if tag == "a":
            in_link.append((a.get("class") or "").split())
        # A Markdown link to another page of the site: MyST writes its text
        # in a span of class "doc std std-doc".
        if tag == "span" and in_link and "internal" in in_link[-1] and a.get("class") == "doc std std-doc":
            continue
        if tag == "div" and a.get("id") == "kbq-finder" and rel.startswith("site/finder"):
            bad = [k for k, _ in attrs if not FINDER_ATTRS.match(k)]
            if bad:
                out.append(f"the finder's element has attributes the generator does not write: {bad}")
            continue
        if tag not in BODY_TAGS:
            out.append(f"<{tag}> in the page body (Markdown makes no such element)")
            continue
        for k, v in attrs:
            v = v or ""
            if k not in BODY_ATTRS["*"] and k not in BODY_ATTRS.get(tag, set()):
                out.append(f"<{tag} {k}=\"{v}\"> (an attribute Markdown does not make)")
            if k == "class" and tag == "div" and FURO_TABLE_WRAPPER.match(v):
                continue
            if k == "class":
                if any(DIRECTIVE_CLASSES.match(c) for c in v.split()):
                    out.append(f"<{tag} class=\"{v}\"> (what a directive or a role makes)")
                if tag == "div" and not all(DIV_CLASSES.match(c) for c in v.split()):
                    out.append(f"<div class=\"{v}\"> (not a code block)")
            if k == "href":
                target = v.strip().lower()
                if re.match(r"^(javascript|data|vbscript|file):", target) or "_downloads/" in target or "_images/" in target:
                    out.append(f"<a href=\"{v}\">")
        if tag == "input" and a.get("type") != "checkbox":
            out.append(f"<input type=\"{a.get('type')}\">")
    for a, code in page.scripts:
        src, code = a.get("src"), code.strip()
        if (src and (code or not HEAD_SCRIPT.match(src))) or (not src and code not in THEME_SCRIPTS):
            out.append(f"a script the site does not load: {a} {code[:200]!r}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conf", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--lang", default="en")
    ap.add_argument("--canary", default="")
    ap.add_argument("--shows", action="append", default=[])
    args = ap.parse_args()
    try:
        import myst_parser  # noqa: F401
        import sphinx  # noqa: F401
    except ImportError as e:
        print(f"Sphinx + MyST not installed ({e}): make deps EXTRA_DEB_PACKAGES='python3-sphinx python3-myst-parser'")
        return 77

    src = pathlib.Path(args.src).resolve()
    out = pathlib.Path(args.out).resolve()
    langs = sorted({args.lang} | {p.name.split(".")[-2] for p in src.glob("site/index.*.md")})
    env = dict(os.environ, KBQ_SITE_LANG=args.lang, KBQ_SITE_SRC=str(src), KBQ_SITE_LANGS=" ".join(langs))
    # No -W: a hostile page may well make Sphinx warn (an unknown lexer);
    # what matters is what the HTML holds.
    cmd = [sys.executable, "-m", "sphinx", "-q", "-b", "html", "-c", args.conf, "-d", str(out / ".doctrees"), str(src), str(out / "html")]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    sys.stdout.write(p.stderr)
    if p.returncode != 0:
        print(f"sphinx-build failed with exit {p.returncode}:\n{p.stdout}")
        return 1

    failures = []
    site = out / "html"
    for d in ("_downloads", "_images"):
        if (site / d).exists():
            failures.append(f"{d}/ exists: a role or a directive copied files of the build machine into the site")
    texts = []
    pages = 0
    for f in sorted(site.rglob("*")):
        if not f.is_file():
            continue
        data = f.read_bytes()
        if args.canary and args.canary.encode() in data:
            failures.append(f"{f.relative_to(site)}: holds the canary text: a file of the build machine was included")
        if f.suffix != ".html" or f.name in ("search.html", "genindex.html"):
            continue
        pages += 1
        page = Page()
        page.feed(data.decode("utf-8"))
        rel = str(f.relative_to(site))
        failures += [f"{rel}: {p}" for p in problems_of(page, rel)]
        texts.append(" ".join("".join(page.text).split()))
    if pages == 0:
        failures.append("no page was built")
    alltext = "\n".join(texts)
    for s in args.shows:
        want = " ".join(s.split())
        if want not in alltext:
            failures.append(f"not shown as written: {want!r}")
    for f in failures:
        print("FAIL " + f)
    print(f"checked {pages} pages built by Sphinx {sphinx.__version__} + myst-parser {myst_parser.__version__}: "
          f"{len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
