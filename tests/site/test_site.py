#!/usr/bin/python3
"""make site-test: the built documentation site (make site) in headless
Chromium, through Selenium, served over HTTP from a local port.

In every language: the index opens and links every family; the site's
search lands on the right recipe page for the questions of issue 15; a
recipe page's launch command equals `kbq show`; the recipe finder shows, for
five choices (one impossible) and one example question, what `kbq --format
json` answers to the same question. Without a browser: every launch command
of every generated recipe page equals `kbq show` for that recipe in that
language. Screenshots go to <site>/screenshots/.

usage: tests/site/test_site.py --kbq build/kbq --site build/site --generated generated
"""
import argparse
import functools
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

# The searches of issue 15: (language, query, pattern the first hit's URL must match).
SEARCHES = [
    # The first hit may be the page of a pattern row ("qwen3_*_peft_config").
    ("en", "qwen3 lora", r"recipes/qwen3_[\w-]*peft\w*\.html"),
    ("en", "llama3 70b pretrain", r"recipes/llama3_70b\w*pretrain\w*\.html"),
    # 微调 is fine-tuning, full (SFT) or parameter-efficient (PEFT, LoRA 微调).
    ("zh", "微调 qwen3", r"recipes/qwen3[\w-]*(sft|peft)\w*\.zh\.html"),
    ("ja", "事前学習 llama3", r"recipes/llama3\w*pretrain\w*\.ja\.html"),
    ("fr", "affiner llama3", r"recipes/llama3\w*sft\w*\.fr\.html"),
]

# Finder choices: (language, model key, mode, GPUs, GPU type, expected verdict).
FINDER = [
    ("en", "qwen3_8b", "peft", "1", "h100", "ok"),
    ("en", "llama3_70b", "sft", "2", "h100", "not_possible"),
    ("fr", "llama3_8b", "sft", "8", "a100", "ok"),
    ("ja", "qwen3_30b_a3b", "sft", "16", "h100", "ok"),
    ("zh", "llama3_70b", "pretrain", "64", "b200", "ok"),
    ("zh", "qwen3_235b_a22b", "peft", "1", "h100", "not_possible"),
]

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def kbq_json(kbq, args):
    p = subprocess.run([kbq, *args, "--format", "json"], capture_output=True, text=True)
    return json.loads(p.stdout or p.stderr)


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kbq", required=True)
    ap.add_argument("--site", required=True)
    ap.add_argument("--generated", required=True)
    args = ap.parse_args()
    site = pathlib.Path(args.site)
    shots = site / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    pages_commands(args.kbq, pathlib.Path(args.generated))

    httpd = serve(site)
    root = f"http://127.0.0.1:{httpd.server_address[1]}"
    drv = browser()
    wait = WebDriverWait(drv, 30)
    try:
        for lang in ("en", "fr", "ja", "zh"):
            drv.get(f"{root}/{lang}/site/index{suffix(lang)}.html")
            links = [a.get_attribute("href") for a in drv.find_elements(By.CSS_SELECTOR, "div.body a")]
            fam = [h for h in links if "/families/" in h]
            check(len(fam) >= 10, f"{lang}: the index links {len(fam)} family pages")
            check(drv.find_element(By.TAG_NAME, "html").get_attribute("lang") == lang, f"{lang}: the index says lang={lang}")
            drv.save_screenshot(str(shots / f"index-{lang}.png"))

        for lang, query, pattern in SEARCHES:
            drv.get(f"{root}/{lang}/search.html?q={urllib.parse.quote(query)}")
            try:
                wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "ul.search li a"))
                first = drv.find_elements(By.CSS_SELECTOR, "ul.search li a")[0].get_attribute("href")
            except Exception:
                first = "(no result)"
            check(re.search(pattern, first) is not None, f"{lang}: search '{query}' first hit {first} matches {pattern}")
            drv.save_screenshot(str(shots / f"search-{lang}-{re.sub(r'[^a-z0-9]+', '-', query)}.png"))

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
            if verdict == "not_possible":
                need = drv.find_element(By.ID, "kbq-finder-need").text
                check(str(j["min_gpus"]) in need, f"{what}: says not possible, needs {j['min_gpus']} GPUs ({need})")
            drv.save_screenshot(str(shots / f"finder-{lang}-{model}-{mode}-{gpus}-{hw}.png"))

        # An example question (the quick reference's) in Japanese.
        drv.get(f"{root}/ja/site/finder.ja.html")
        wait.until(lambda d: d.find_element(By.ID, "kbq-finder").get_attribute("data-state") == "ready")
        Select(drv.find_element(By.ID, "kbq-finder-example")).select_by_index(1)
        q = drv.find_element(By.ID, "kbq-finder").get_attribute("data-question")
        j = kbq_json(args.kbq, [q, "--lang", "ja"])
        text = drv.find_element(By.ID, "kbq-finder-out").get_attribute("textContent")
        check(bool(j.get("results")) and j["results"][0]["recipe"] in text, f"ja: finder example '{q}' shows kbq's recipe")
        drv.save_screenshot(str(shots / "finder-ja-example.png"))
    finally:
        drv.quit()
        httpd.shutdown()
    print(f"site-test: {len(failures)} failure(s); screenshots in {shots}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
