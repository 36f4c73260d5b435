#!/usr/bin/python3
"""make site-test: the built documentation site (make site) in headless
Chromium, through Selenium, served over HTTP from a local port.

The root landing page links every language's finder and recipes; every page
type, in every language, has a language switcher that leads to the same page
in the other language, and no horizontal scroll at 1280 px and 390 px; no
page of fr, ja or zh shows an English interface string (every page walked,
without the browser, and the search page's script-made strings in it); every
code block has a copy button that copies it. In every language: the index
opens and links every family; the site's
search lands on the right recipe page for the questions of issue 15; a
recipe page's launch command equals `kbq show`; the recipe finder shows, for
five choices (one impossible) and one example question, what `kbq --format
json` answers to the same question. Without a browser: every launch command
of every generated recipe page equals `kbq show` for that recipe in that
language, and every recipe row of the built recipe index, in every language,
shows the TP, PP, CP and GPU count the code sets (kbq show's facts); every
flag and quote of a generated page is shown as written (no smart quotes).
Screenshots go to <site>/screenshots/.

usage: tests/site/test_site.py --kbq build/kbq --site build/site --generated generated
"""
import argparse
import csv
import functools
import html.parser
import http.server
import json
import pathlib
import re
import subprocess
import sys
import threading
import urllib.parse

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

# Searches in four languages: (language, query, pattern the first hit's URL
# must match). The first hit is the search page's first recipe (the site's
# recipe index, site/static/search.js), else Sphinx's first result.
SEARCHES = [
    # The first hit may be the page of a pattern row ("qwen3_*_peft_config").
    ("en", "qwen3 lora", r"recipes/qwen3_[\w-]*peft\w*\.html"),
    ("en", "llama3 70b pretrain", r"recipes/llama3_70b\w*pretrain\w*\.html"),
    ("en", "llama3 8b sft 8 gpus", r"recipes/llama3_8b_sft_config\.html"),
    ("en", "lora qwen3 8b", r"recipes/qwen3_8b_peft_config\.html"),
    ("en", "llama 3 8b fine-tune", r"recipes/llama3_8b_sft_config\.html"),
    ("en", "deepseek v3 pretraining", r"recipes/deepseek_v3_pretrain_config\.html"),
    ("en", "qwen3 30b a3b sft", r"recipes/qwen3_30b_a3b_sft_config\.html"),
    ("fr", "affiner llama3", r"recipes/llama3\w*sft\w*\.fr\.html"),
    ("fr", "lora qwen3 8b", r"recipes/qwen3_8b_peft_config\.fr\.html"),
    ("fr", "pré-entraînement llama3 70b", r"recipes/llama3_70b\w*pretrain\w*\.fr\.html"),
    ("fr", "affiner llama3 8b sur 8 GPU", r"recipes/llama3_8b_sft_config\.fr\.html"),
    ("ja", "事前学習 llama3", r"recipes/llama3\w*pretrain\w*\.ja\.html"),
    ("ja", "qwen3 8b lora", r"recipes/qwen3_8b_peft_config\.ja\.html"),
    ("ja", "llama3 8b ファインチューニング", r"recipes/llama3_8b_sft_config\.ja\.html"),
    ("ja", "deepseek v3 事前学習", r"recipes/deepseek_v3_pretrain_config\.ja\.html"),
    # 微调 is fine-tuning, full (SFT) or parameter-efficient (PEFT, LoRA 微调).
    ("zh", "微调 qwen3", r"recipes/qwen3[\w-]*(sft|peft)\w*\.zh\.html"),
    ("zh", "预训练 llama3 70b", r"recipes/llama3_70b\w*pretrain\w*\.zh\.html"),
    ("zh", "qwen3 8b lora", r"recipes/qwen3_8b_peft_config\.zh\.html"),
    ("zh", "llama3 8b 全量微调", r"recipes/llama3_8b_sft_config\.zh\.html"),
    ("zh", "gemma3 1b 预训练", r"recipes/gemma3_1b_pretrain_config\.zh\.html"),
]

# Finder choices: (language, model key, mode, GPUs, GPU type, expected verdict).
FINDER = [
    ("en", "qwen3_8b", "peft", "1", "h100", "ok"),
    ("en", "llama3_70b", "sft", "2", "h100", "not_possible"),
    ("fr", "llama3_8b", "sft", "8", "a100", "ok"),
    ("ja", "qwen3_30b_a3b", "sft", "16", "h100", "ok"),
    ("zh", "llama3_70b", "pretrain", "64", "b200", "ok"),
    ("zh", "qwen3_235b_a22b", "peft", "1", "h100", "not_possible"),
    ("ja", "deepseek_v3", "pretrain", "16", "b200", "not_possible"),
    ("fr", "qwen3_30b_a3b", "sft", "1", "a100", "not_possible"),
    ("en", "llama3_70b", "pretrain", "4", "gb300", "not_possible"),
    ("ja", "llama31_405b", "sft", "8", "h200", "not_possible"),
]

# The page types, per language: (name, path under <lang>/ with {s} for the language suffix).
PAGE_TYPES = [
    ("index", "site/index{s}.html"),
    ("family", "site/families/library-llama{s}.html"),
    ("recipe", "site/recipes/llama3_8b_sft_config{s}.html"),
    ("finder", "site/finder{s}.html"),
    ("skill", "skill/SKILL.{lang}.html"),
    ("recipe-index", "references/recipe-index{s}.html"),
    ("drift", "drift{s}.html"),
    ("search", "search.html?q=llama3"),
]
WIDTHS = (1280, 390)

# Sphinx's and the theme's own English interface strings: none may stand on
# a page of another language (on top of every English string of data/ui.tsv).
THEME_ENGLISH = ["Search Results", "Hide Search Matches", "Back to top", "On this page", "Made with", "Next", "Previous",
                 "Contents", "Copyright", "Searching", "Search", "Copy", "Copied!", "Copy to clipboard", "Languages"]

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def kbq_json(kbq, args):
    p = subprocess.run([kbq, *args, "--format", "json"], capture_output=True, text=True)
    return json.loads(p.stdout or p.stderr)


def kbq_text(kbq, args):
    # --width 0: one line per item, as the finder shows each field on one line.
    return subprocess.run([kbq, *args, "--width", "0"], capture_output=True, text=True).stdout


def finder_throughput(drv, kbq, lang, q, what):
    """The finder's throughput line is kbq's, word for word: the line of
    kbq's text answer to the same question (measured, estimated with its
    band and how, or no estimate with the reason)."""
    text = kbq_text(kbq, [q, "--lang", lang])
    want = [l.strip() for l in text.splitlines() if l.startswith("  ") and not l.startswith("   ")]
    shown = drv.find_elements(By.ID, "kbq-finder-throughput")
    j = kbq_json(kbq, [q, "--lang", lang])
    t = (j.get("results") or [{}])[0].get("throughput") or {}
    if t.get("basis") == "none" and not t.get("how"):
        check(not shown, f"{what}: no throughput line, as kbq gives none")
        return
    check(bool(shown) and shown[0].text.strip() in want, f"{what}: throughput line is kbq's ({shown[0].text[:70] if shown else ''!r})")


def suffix(lang):
    return "" if lang == "en" else "." + lang


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(root):
    handler = functools.partial(QuietHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def browser():
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1600"):
        opts.add_argument(a)
    opts.binary_location = "/usr/bin/chromium"
    service = webdriver.ChromeService(executable_path="/usr/bin/chromedriver") if hasattr(webdriver, "ChromeService") else None
    if service is None:
        from selenium.webdriver.chrome.service import Service
        service = Service(executable_path="/usr/bin/chromedriver")
    return webdriver.Chrome(options=opts, service=service)


def fenced_commands(md):
    return re.findall(r"```bash\n(.*?)\n```", md, re.S)


def pages_commands(kbq, generated):
    """Every launch command on the generated recipe pages is kbq show's: each
    page shows exactly the commands kbq show gives for its recipe and language
    (one, or none when kbq show has none), every fence compared, not the first."""
    n = 0
    for page in sorted((generated / "site" / "recipes").glob("*.md")):
        cmds = fenced_commands(page.read_text(encoding="utf-8"))
        m = re.match(r"(.*?)(?:\.(fr|ja|zh))?\.md$", page.name)
        name, lang = m.group(1), m.group(2) or "en"
        j = kbq_json(kbq, ["show", name, "--lang", lang])
        want = [r["command"] for r in j.get("results", []) if r.get("command")]
        n += bool(cmds)
        if cmds != want:
            check(False, f"{page}: its {len(cmds)} launch command(s) differ from kbq show {name}'s {len(want)}")
    check(n > 100, f"{n} recipe pages' launch commands equal kbq show's")


class TableRows(html.parser.HTMLParser):
    """The text of every cell of every table row (<tr>) of a page."""

    def __init__(self):
        super().__init__()
        self.rows, self.row, self.cell = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append("".join(self.cell).strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def recipe_index_values(kbq, site):
    """Without a browser: the built recipe index of every language shows, for
    every recipe it names on a row of its own (not a pattern row, not one that
    raises at run time), the TP, PP and CP the code sets and the GPU count its
    code states, as `kbq show --format json` reads them from the newest
    snapshot (issue 21: the tables are regenerated from the code, not copied
    from the documents). CP 1 prints as a dash, as the published tables do."""
    names, pages = set(), {}
    for lang in ("en", "fr", "ja", "zh"):
        path = site / lang / "references" / f"recipe-index{suffix(lang)}.html"
        parser = TableRows()
        parser.feed(path.read_text(encoding="utf-8"))
        rows = {r[0]: r for r in parser.rows if len(r) >= 8 and re.fullmatch(r"[a-z0-9_]+", r[0]) and r[2]}
        pages[lang] = rows
        names |= set(rows)
    check(len(names) >= 200, f"the built recipe index names {len(names)} recipes on rows of their own")
    one = lambda v: "1" if v in ("—", "None") else v
    wrong = 0
    for name in sorted(names):
        f = kbq_json(kbq, ["show", name])["results"][0]["facts"]
        want = [str(f["tp"]), str(f["pp"]), one(str(f["cp"])), str(f.get("native_gpus") or f.get("min_gpus"))]
        for lang, rows in pages.items():
            r = rows.get(name)
            got = [r[2], r[3], one(r[4]), r[7]] if r else None
            if got != want:
                wrong += 1
                check(False, f"{lang}: recipe index row of {name}: TP, PP, CP, GPUs {got}, the code sets {want}")
    print(f"site-test: {len(names)} recipes of the built recipe index, in four languages, show the code's TP, PP, CP "
          f"and GPUs ({wrong} differ)")


# A flag as a reader copies it: "--recipe", "--srun-arg=ARG" (not inside a longer word).
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9_-]*")


class BodyText(html.parser.HTMLParser):
    """The text of a page's <article> (what the reader reads), entities decoded."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth, self.parts = 0, []

    def handle_starttag(self, tag, attrs):
        if tag == "article" or self.depth:
            self.depth += 1

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.parts.append(data)


def text_as_written(site, generated):
    """Without a browser: every page shows its text as kbc wrote it. Each
    flag of a generated page ("--dataset squad" in prose, "--srun-arg") is
    in the built page's text as written, not turned into an en dash and a
    word, and the page has no curly quote its source lacks (quoted code such
    as NotImplementedError('...') stays as the code prints it)."""
    pages, flags, wrong = 0, 0, 0
    for md in sorted(generated.rglob("*.md")):
        rel = md.relative_to(generated)
        if rel.parts[0] == "site" and rel.parts[1:2] == ("answers",):
            continue
        m = re.match(r".*?\.(fr|ja|zh|en)\.md$", md.name)
        langs = [m.group(1)] if m else ["en"]
        if not m and not any(md.with_name(md.name[:-3] + f".{l}.md").exists() for l in ("fr", "ja", "zh")):
            langs = ["en", "fr", "ja", "zh"]  # a page written once for every language (translation-status.md)
        source = md.read_text(encoding="utf-8")
        want = sorted(set(FLAG.findall(source)))
        for lang in langs:
            built = site / lang / rel.with_suffix(".html")
            if not built.exists():
                continue
            parser = BodyText()
            parser.feed(built.read_text(encoding="utf-8"))
            text = "".join(parser.parts)
            pages += 1
            flags += len(want)
            missing = [f for f in want if f not in text]
            if missing:
                check(False, f"{lang}/{rel.with_suffix('.html')}: the flags {missing[:5]} of its source are not shown as written")
            curly = [q for q in "\u2018\u2019\u201c\u201d" if text.count(q) > source.count(q)]
            if curly:
                check(False, f"{lang}/{rel.with_suffix('.html')}: curly quotes {curly} its source does not have")
            wrong += bool(missing or curly)
    check(pages > 400 and flags > 100, f"{pages} built pages compared with their sources ({flags} flags)")
    print(f"site-test: {pages} built pages show their sources' {flags} flags and quotes as written ({wrong} do not)")


def ui_strings(sources):
    """data/ui.tsv: {lang: {key: text}}."""
    out = {}
    with open(sources / "data" / "ui.tsv", encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or line.startswith("lang\t"):
                continue
            cells = line.rstrip("\n").split("\t")
            if len(cells) >= 3:
                out.setdefault(cells[0], {})[cells[1]] = cells[2]
    return out


class TextNodes(html.parser.HTMLParser):
    """The visible text nodes of a page and the attributes a reader meets
    (placeholder, aria-label, title, data-label-*), outside script/style."""

    def __init__(self):
        super().__init__()
        self.skip = 0
        self.nodes = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
        for k, v in attrs:
            if v and (k in ("placeholder", "aria-label", "title", "alt") or k.startswith("data-label-")):
                self.nodes.append(v.strip())

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip and data.strip():
            self.nodes.append(data.strip().rstrip(":").strip())


def english_ui(ui, lang):
    """The English interface strings that must not stand on a `lang` page:
    every en label of data/ui.tsv whose `lang` label differs, and the
    theme's."""
    en, own = ui["en"], ui.get(lang, {})
    words = {t for k, t in en.items() if own.get(k) not in (None, t) and not re.search(r"\{\w+\}", t) and len(t) > 3}
    # Each language's name in that language (the switcher: "English" is
    # how an English reader finds their way back).
    endonyms = {ui[l].get("lang." + l) for l in ui}
    return (words | set(THEME_ENGLISH)) - endonyms


def no_english_ui(site, ui):
    """Walk every page of fr, ja and zh: no text node (nor label attribute)
    is an English interface string."""
    for lang in ("fr", "ja", "zh"):
        bad = english_ui(ui, lang)
        # The pages written once for every language (the translation status,
        # for the docs maintainer, in English) are the same on every site.
        pages = sorted(p for p in (site / lang).rglob("*.html")
                       if not ((pathlib.Path(generated_dir) / p.relative_to(site / lang)).with_suffix(".md").exists()
                               and not p.stem.endswith("." + lang)))
        hits = []
        for page in pages:
            p = TextNodes()
            p.feed(page.read_text(encoding="utf-8"))
            hits += [f"{page.relative_to(site)}: '{t}'" for t in p.nodes if t in bad]
        check(len(pages) > 100 and not hits, f"{lang}: {len(pages)} pages, no English interface string"
              + ("" if not hits else f" ({len(hits)} found, e.g. {hits[:5]})"))


def no_sideways_scroll(drv, what):
    over = drv.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    check(over <= 1, f"{what}: no horizontal scroll (overflow {over} px)")


def page_types(drv, root, shots, wait):
    """Every page type in every language at both widths: the switcher leads
    to the same page in the other language; no horizontal scroll."""
    for width in WIDTHS:
        drv.set_window_size(width, 1000)
        drv.get(f"{root}/")
        no_sideways_scroll(drv, f"landing page at {width} px")
        drv.save_screenshot(str(shots / f"landing-{width}.png"))
        for lang in ("en", "fr", "ja", "zh"):
            for name, path in PAGE_TYPES:
                url = f"{root}/{lang}/" + path.format(s=suffix(lang), lang=lang)
                drv.get(url)
                if name == "finder":
                    wait.until(lambda d: d.find_element(By.ID, "kbq-finder").get_attribute("data-state") == "ready")
                if name == "search":
                    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "ul.search li a"))
                what = f"{lang} {name} page at {width} px"
                no_sideways_scroll(drv, what)
                drv.save_screenshot(str(shots / f"{name}-{lang}-{width}.png"))
                if width != WIDTHS[0]:
                    continue
                links = {a.get_attribute("hreflang"): a.get_attribute("href") for a in drv.find_elements(By.CSS_SELECTOR, "nav.kbq-langs a.kbq-lang")}
                check(sorted(links) == sorted({"en", "fr", "ja", "zh"} - {lang}), f"{what}: the switcher offers {sorted(links)}")
                if name in ("search",):
                    continue
                for other, href in sorted(links.items()):
                    want = f"/{other}/" + path.format(s=suffix(other), lang=other)
                    check(urllib.parse.urlparse(href).path == want, f"{what}: the switcher's {other} link is {want} ({href})")
        # The search page's script-made words (Sphinx's translations) in the page's language.
        drv.set_window_size(WIDTHS[0], 1000)


def landing(drv, root, shots, ui):
    drv.get(f"{root}/")
    for lang in ("en", "fr", "ja", "zh"):
        sec = drv.find_elements(By.CSS_SELECTOR, f"section[lang='{lang}']")
        check(len(sec) == 1 and ui[lang]["lang." + lang] in sec[0].text, f"landing page: a section in {ui[lang]['lang.' + lang]}")
        if not sec:
            continue
        for cls, target in (("kbq-landing-finder", f"/{lang}/site/finder{suffix(lang)}.html"),
                            ("kbq-landing-recipes", f"/{lang}/site/index{suffix(lang)}.html")):
            a = sec[0].find_elements(By.CSS_SELECTOR, "a." + cls)
            check(bool(a) and urllib.parse.urlparse(a[0].get_attribute("href")).path == target, f"landing page: {lang} links {target}")
    drv.find_element(By.CSS_SELECTOR, "section[lang='ja'] a.kbq-landing-finder").click()
    check(drv.find_element(By.TAG_NAME, "html").get_attribute("lang") == "ja" and drv.find_elements(By.ID, "kbq-finder"),
          "landing page: the ja finder link opens the ja finder")


def copy_buttons(drv, root, shots, wait):
    """Every code block of a recipe page has a copy button, and pressing it
    puts the block's text (the launch command) in the clipboard."""
    for lang in ("en", "ja"):
        drv.get(f"{root}/{lang}/site/recipes/llama3_8b_sft_config{suffix(lang)}.html")
        blocks = drv.find_elements(By.CSS_SELECTOR, "div.highlight")
        buttons = drv.find_elements(By.CSS_SELECTOR, "div.highlight button.copybtn")
        check(len(blocks) >= 1 and len(buttons) == len(blocks), f"{lang}: {len(buttons)} copy buttons for {len(blocks)} code blocks")
        if not buttons:
            continue
        want = drv.find_element(By.CSS_SELECTOR, "div.highlight-bash pre").text.strip()
        # What the button copies: sphinx-copybutton copies through clipboard.js,
        # which selects a hidden text area holding the text and runs the
        # copy command; headless Chromium has no clipboard to read back, so
        # the test records the selected text when the command runs.
        drv.execute_script("window.kbqCopied = null; var run = document.execCommand.bind(document);"
                           " document.execCommand = function (c) { if (c === 'copy') {"
                           " var t = document.activeElement && document.activeElement.tagName === 'TEXTAREA' ? document.activeElement :"
                           " Array.prototype.slice.call(document.querySelectorAll('textarea')).pop();"
                           " window.kbqCopied = t ? t.value.substring(t.selectionStart, t.selectionEnd) : String(document.getSelection()); }"
                           " return run.apply(null, arguments); };")
        wait.until(lambda d: d.execute_script("return window.ClipboardJS !== undefined"))
        drv.execute_script("arguments[0].scrollIntoView(); arguments[0].click();", drv.find_element(By.CSS_SELECTOR, "div.highlight-bash button.copybtn"))
        got = drv.execute_script("return window.kbqCopied")
        check(got is not None and got.strip() == want, f"{lang}: the launch command's copy button copies it ({(got or '')[:60]!r})")
        tip = drv.find_element(By.CSS_SELECTOR, "div.highlight-bash button.copybtn").get_attribute("data-tooltip")
        check(tip == ui_words[lang]["theme.copied"], f"{lang}: the button then says {tip!r}")


def finder_default(drv, root, kbq, shots, wait):
    """The finder opens on the quick reference's first pick, and it answers."""
    for lang in ("en", "fr", "ja", "zh"):
        drv.get(f"{root}/{lang}/site/finder{suffix(lang)}.html")
        wait.until(lambda d: d.find_element(By.ID, "kbq-finder").get_attribute("data-state") == "ready")
        q = drv.find_element(By.ID, "kbq-finder").get_attribute("data-question")
        j = kbq_json(kbq, [q, "--lang", lang])
        pick = [e for e in json.loads((pathlib.Path(root_dir) / lang / "_static" / "finder" / "examples.json").read_text(encoding="utf-8"))
                if e.get("verdict") == "ok"][0]
        check(j["verdict"] == "ok" and not drv.find_elements(By.ID, "kbq-finder-need"), f"{lang}: the finder's default '{q}' answers")
        check(bool(j.get("results")) and j["results"][0]["recipe"] == pick["recipe"] == drv.find_element(By.ID, "kbq-finder-recipe").text,
              f"{lang}: the default is the quick reference's first pick {pick['recipe']}")
        drv.save_screenshot(str(shots / f"finder-default-{lang}.png"))


def finder_works_first(drv, kbq, lang, j, what):
    """An impossible choice leads with the plan that works: kbq's first
    alternative whose own answer is ok, in full, above the failing plan."""
    want = None
    for alt in j.get("alternatives") or []:
        a = kbq_json(kbq, [f"{alt['recipe']} gpus:{alt['gpus']} hardware:{alt['hardware']}", "--lang", lang])
        if a["verdict"] == "ok" and a.get("results"):
            want = a["results"][0]
            break
    works = drv.find_elements(By.ID, "kbq-finder-works")
    check(want is not None and bool(works), f"{what}: leads with a plan that works")
    if not works or want is None:
        return
    order = drv.execute_script("return arguments[0].compareDocumentPosition(document.getElementById('kbq-finder-asked')) & 4", works[0])
    check(order == 4, f"{what}: the plan that works stands above the failing one")
    shown = works[0].find_element(By.CSS_SELECTOR, "pre").text.strip()
    check(want["recipe"] in works[0].text and shown == want["command"].strip(), f"{what}: it is kbq's {want['recipe']} with its command")
    link = works[0].find_elements(By.CSS_SELECTOR, "dd a")
    if (pathlib.Path(generated_dir) / "site" / "recipes" / f"{want['recipe']}.md").exists():
        check(bool(link) and link[0].get_attribute("href").endswith(f"recipes/{want['recipe']}{suffix(lang)}.html"), f"{what}: its recipe links its page")
    else:
        check(not link, f"{what}: {want['recipe']} has no page of its own, and no link")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kbq", required=True)
    ap.add_argument("--site", required=True)
    ap.add_argument("--generated", required=True)
    ap.add_argument("--sources", default="kb-sources")
    args = ap.parse_args()
    site = pathlib.Path(args.site)
    global root_dir, generated_dir
    root_dir = site
    generated_dir = args.generated
    ui = ui_strings(pathlib.Path(args.sources))
    global ui_words
    ui_words = ui
    no_english_ui(site, ui)
    shots = site / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    pages_commands(args.kbq, pathlib.Path(args.generated))
    recipe_index_values(args.kbq, site)
    text_as_written(site, pathlib.Path(args.generated))

    httpd = serve(site)
    root = f"http://127.0.0.1:{httpd.server_address[1]}"
    drv = browser()
    wait = WebDriverWait(drv, 30)
    try:
        landing(drv, root, shots, ui)
        page_types(drv, root, shots, wait)
        copy_buttons(drv, root, shots, wait)
        finder_default(drv, root, args.kbq, shots, wait)
        for lang in ("fr", "ja", "zh"):
            drv.get(f"{root}/{lang}/search.html?q=llama3")
            wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "ul.search li a"))
            seen = [t for t in THEME_ENGLISH if t in drv.find_element(By.TAG_NAME, "body").text.split("\n")]
            summary = drv.find_elements(By.CSS_SELECTOR, "p.search-summary")
            check(not seen and not any("Search finished" in s.text for s in summary), f"{lang}: the search page speaks {lang} ({seen})")
        for lang in ("en", "fr", "ja", "zh"):
            drv.get(f"{root}/{lang}/site/index{suffix(lang)}.html")
            links = [a.get_attribute("href") for a in drv.find_elements(By.CSS_SELECTOR, "article a")]
            fam = [h for h in links if "/families/" in h]
            check(len(fam) >= 10, f"{lang}: the index links {len(fam)} family pages")
            html_lang = drv.find_element(By.TAG_NAME, "html").get_attribute("lang")
            check(html_lang.split("-")[0] == lang, f"{lang}: the index says lang={html_lang}")
            drv.save_screenshot(str(shots / f"index-{lang}.png"))

        first_hits = 0
        for lang, query, pattern in SEARCHES:
            drv.get(f"{root}/{lang}/search.html?q={urllib.parse.quote(query)}")
            try:
                wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "ul.search li a"))
                # The recipe index loads on its own (fetch): its hits, or its
                # word that none matched, before the first hit is read.
                wait.until(lambda d: d.find_element(By.ID, "kbq-recipe-hits").get_attribute("data-state") in ("ready", "none"))
                ours = drv.find_elements(By.CSS_SELECTOR, "#kbq-recipe-hits li a")
                first = (ours or drv.find_elements(By.CSS_SELECTOR, "ul.search li a"))[0].get_attribute("href")
            except Exception:
                first = "(no result)"
            ok = re.search(pattern, first) is not None
            first_hits += ok
            check(ok, f"{lang}: search '{query}' first hit {first} matches {pattern}")
            drv.save_screenshot(str(shots / f"search-{lang}-{re.sub(r'[^a-z0-9]+', '-', query)}.png"))

        print(f"site-test: {first_hits} of {len(SEARCHES)} searches land on the right recipe first")

        # A recipe page: its launch command equals kbq show's.
        for lang in ("en", "ja"):
            drv.get(f"{root}/{lang}/site/recipes/llama3_8b_sft_config{suffix(lang)}.html")
            shown = drv.find_element(By.CSS_SELECTOR, "div.highlight-bash pre").text
            want = kbq_json(args.kbq, ["show", "llama3_8b_sft_config", "--lang", lang])["results"][0]["command"]
            check(shown.strip() == want.strip(), f"{lang}: the llama3_8b_sft_config page's command equals kbq show")
            drv.save_screenshot(str(shots / f"recipe-{lang}.png"))

        for lang, model, mode, gpus, hw, verdict in FINDER:
            drv.get(f"{root}/{lang}/site/finder{suffix(lang)}.html")
            wait.until(lambda d: d.find_element(By.ID, "kbq-finder").get_attribute("data-state") == "ready")
            Select(drv.find_element(By.ID, "kbq-finder-model")).select_by_value(model)
            Select(drv.find_element(By.ID, "kbq-finder-mode")).select_by_value(mode)
            Select(drv.find_element(By.ID, "kbq-finder-gpus")).select_by_value(gpus)
            Select(drv.find_element(By.ID, "kbq-finder-hardware")).select_by_value(hw)
            wait.until(lambda d: d.find_element(By.ID, "kbq-finder").get_attribute("data-state") == "ready"
                       and f"gpus:{gpus} hardware:{hw}" in (d.find_element(By.ID, "kbq-finder").get_attribute("data-question") or "")
                       and f"mode:{mode} " in d.find_element(By.ID, "kbq-finder").get_attribute("data-question"))
            q = drv.find_element(By.ID, "kbq-finder").get_attribute("data-question")
            j = kbq_json(args.kbq, [q, "--lang", lang])
            what = f"{lang}: finder '{q}'"
            check(j["verdict"] == verdict, f"{what}: kbq's verdict is {verdict}")
            top = j["results"][0]
            check(drv.find_element(By.ID, "kbq-finder-recipe").text == top["recipe"], f"{what}: recipe {top['recipe']}")
            check(drv.find_element(By.ID, "kbq-finder-command").text.strip() == top["command"].strip(), f"{what}: the command is kbq's")
            L = top["layout"]
            layout = drv.find_element(By.ID, "kbq-finder-layout").text
            check(f"TP {L['tp']} · PP {L['pp']} · CP {L['cp']} · EP {L['ep']} · DP {L['dp']}" in layout and layout.startswith(f"{L['gpus']} "),
                  f"{what}: layout {layout}")
            mem = drv.find_element(By.ID, "kbq-finder-memory").text
            check(mem == f"{top['memory']['per_gpu_gib']:.1f}", f"{what}: memory {mem} GiB per GPU")
            finder_throughput(drv, args.kbq, lang, q, what)
            if verdict == "not_possible":
                need = drv.find_element(By.ID, "kbq-finder-need").text
                check(str(j["min_gpus"]) in need, f"{what}: says not possible, needs {j['min_gpus']} GPUs ({need})")
                finder_works_first(drv, args.kbq, lang, j, what)
            drv.save_screenshot(str(shots / f"finder-{lang}-{model}-{mode}-{gpus}-{hw}.png"))
            if verdict == "ok":
                # A token budget: the time to train it, as kbq answers the
                # same question with the budget (tokens:), word for word.
                budget = Select(drv.find_element(By.ID, "kbq-finder-budget"))
                key = budget.options[-1].get_attribute("value")
                budget.select_by_value(key)
                wait.until(lambda d: f"tokens:{key}" in (d.find_element(By.ID, "kbq-finder").get_attribute("data-question") or ""))
                qb = drv.find_element(By.ID, "kbq-finder").get_attribute("data-question")
                text = kbq_text(args.kbq, [qb, "--lang", lang])
                shown = drv.find_elements(By.ID, "kbq-finder-time")
                check(bool(shown) and shown[0].text.strip() in [l.strip() for l in text.splitlines()],
                      f"{lang}: finder '{qb}': time to train is kbq's ({shown[0].text if shown else ''!r})")
                drv.save_screenshot(str(shots / f"finder-{lang}-{model}-{mode}-{gpus}-{hw}-{key}.png"))
                budget.select_by_value("")

        # An example question (the quick reference's) in Japanese.
        drv.get(f"{root}/ja/site/finder.ja.html")
        wait.until(lambda d: d.find_element(By.ID, "kbq-finder").get_attribute("data-state") == "ready")
        Select(drv.find_element(By.ID, "kbq-finder-example")).select_by_index(1)
        q = drv.find_element(By.ID, "kbq-finder").get_attribute("data-question")
        j = kbq_json(args.kbq, [q, "--lang", "ja"])
        text = drv.find_element(By.ID, "kbq-finder-out").get_attribute("textContent")
        check(bool(j.get("results")) and j["results"][0]["recipe"] in text, f"ja: finder example '{q}' shows kbq's recipe")
        if j.get("results"):
            top = j["results"][0]
            model_name = Select(drv.find_element(By.ID, "kbq-finder-model")).first_selected_option.text
            mode_value = Select(drv.find_element(By.ID, "kbq-finder-mode")).first_selected_option.get_attribute("value")
            hw_value = Select(drv.find_element(By.ID, "kbq-finder-hardware")).first_selected_option.get_attribute("value")
            check(model_name == top["model"] and mode_value == top["mode"] and hw_value == top["layout"]["hardware"],
                  f"ja: the example sets the selects to its answer ({model_name}, {mode_value}, {hw_value})")
        drv.save_screenshot(str(shots / "finder-ja-example.png"))
    finally:
        drv.quit()
        httpd.shutdown()
    print(f"site-test: {len(failures)} failure(s); screenshots in {shots}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
