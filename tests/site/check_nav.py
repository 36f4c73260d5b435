#!/usr/bin/python3
"""Checks the site's sidebar shortcut (site/conf.py, _NavTemplate): builds a
small site with the site's own configuration, where every page's sidebar is
computed both from the template and by furo's own pass
(KBQ_SITE_NAV_CHECK_EVERY=1; a difference stops the build), and checks from
the counts the build writes (KBQ_SITE_NAV_STATS) that the template answered
the pages it should and left to furo the one it should not (a page two
toctrees list).

The pages: a root toctree with two families, a page at the top of the
tree, an external link and a page with sections; recipes two levels down;
a recipe in both families; an orphan page no toctree lists; Sphinx's own
search and index pages.

Run by tests/test_site_nav.cpp; exit 77 when Sphinx, myst-parser, furo or
BeautifulSoup is missing.

usage: check_nav.py --conf site --out DIR
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys

PAGES = {
    "site/index.md": "# Recipes\n\nThe site.\n\n```{toctree}\n:hidden:\nfamilies/a\nfamilies/b\n../drift\n"
                     "Example <https://example.com/>\n```\n",
    "site/families/a.md": "# Family A\n\n```{toctree}\n:hidden:\n../recipes/x\n../recipes/y\n../recipes/shared\n```\n",
    "site/families/b.md": "# Family B\n\n```{toctree}\n:hidden:\n../recipes/z\n../recipes/shared\n```\n",
    "site/recipes/x.md": "# x\n\n## Launch\n\ntext\n\n## Values\n\ntext\n",
    "site/recipes/y.md": "# y\n\ntext\n",
    "site/recipes/z.md": "# z\n\ntext\n",
    "site/recipes/shared.md": "# shared\n\ntext\n",
    "site/orphan.md": "---\norphan: true\n---\n\n# Orphan\n\ntext\n",
    "drift.md": "# Drift\n\n## One\n\ntext\n",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conf", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    try:
        import bs4  # noqa: F401
        import furo  # noqa: F401
        import myst_parser  # noqa: F401
        import sphinx  # noqa: F401
    except ImportError as e:
        print(f"missing: {e.name}")
        return 77
    out = pathlib.Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    src = out / "src"
    for name, text in PAGES.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, encoding="utf-8")
    stats = out / "stats.json"
    env = dict(os.environ, KBQ_SITE_LANG="en", KBQ_SITE_LANGS="en", KBQ_SITE_SRC=str(src.resolve()), KBQ_SITE_NAV_CHECK_EVERY="1",
               KBQ_SITE_NAV_STATS=str(stats))
    env.pop("KBQ_SITE_LOCALE", None)
    p = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", "-c", args.conf, "-d", str(out / "doctrees"), str(src),
                        str(out / "html")], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"sphinx-build failed ({p.returncode}):\n{p.stdout}{p.stderr}")
        return 1
    got = json.loads(stats.read_text(encoding="utf-8"))
    pages = sum(1 for _ in (out / "html").rglob("*.html"))
    print(f"{pages} pages: {got}")
    failures = []
    # Every page but the one two toctrees list: from the template, each one
    # also computed by furo and found equal (or the build would have stopped).
    if got.get("furo") != 1:
        failures.append(f"furo's own pass ran for {got.get('furo')} pages, not 1 (recipes/shared, listed twice)")
    if got.get("template") != pages - 1 or got.get("checked") != got.get("template"):
        failures.append(f"the template answered {got.get('template')} pages and {got.get('checked')} were checked; "
                        f"{pages - 1} of {pages} expected, each checked")
    x = (out / "html" / "site" / "recipes" / "x.html").read_text(encoding="utf-8")
    if 'class="toctree-l2 current current-page"' not in x or 'class="current reference internal" href="#"' not in x:
        failures.append("site/recipes/x.html: its own entry is not marked current")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
