#!/usr/bin/env python3
"""The benchmark driver behind `make bench` (bench/run.sh): times kbq and
kbc as whole processes beside their floors and prints one table per figure.

1. kbq latency: a fixed suite of 20 queries (four languages, every term
   kind, show / check, text and JSON), each run --runs times (default 30)
   with the embedded KB and with --kb FILE, interleaved with the floor: the
   sqlite3 shell opening the same KB file and running one full-text query.
   Median, p10, p90 of wall time from spawn to exit; ratio = kbq / floor.
2. kbc build of kb-sources: median of --build-runs (default 10) beside the
   floor: cmark-gfm -e table over the same .md files plus sqlite3 loading the
   same rows (base/schema.sql + `kbc dump --format sql`) into a new file.
3. Scale: bench/gen_sources.py writes 10x, 100x, 1000x the recipes and
   documents; per scale: build time, KB size, kbq latency with --kb (a
   subset of the suite), and peak memory of kbc and kbq.
4. Peak memory (max RSS from wait4) of every process above.
5. Every question of tests/questions.tsv, --question-runs times each
   (default 10) with the embedded KB, interleaved with the floor, by class:
   questions naming a model, questions naming none (their canonical form
   has no model term), show and check (the suite's): median and worst ratio
   to the floor, peak RSS.
6. --batch: the documentation site's recipe finder grid
   (generated/site/finder.json, models x modes x GPU counts x GPU types)
   answered by one `kbq --batch` process per language: ms per answer,
   for whole records and for the parts the site reads (--select).
7. Sizes: the embedded (runtime) KB, the full KB, kbq as built and
   stripped.
8. The query parser against its input: kb_dsl_bench times
   kbq::dsl::parse() directly (no question length limit) on lines of 10 KB,
   100 KB and 1 MB of a dozen shapes; linear means the time per byte does
   not grow with the size (bench/dsl_bench.cpp).

Processes are started with posix_spawn and reaped with wait4, so each
figure is start-to-exit of the program itself, with its output discarded.
Peak memory comes from GNU time (/usr/bin/time -f %M), one extra run per
process, because a child spawned by Python inherits the interpreter's peak
RSS figure across exec. kbq's pages are dropped from the page cache before
the first run (drop_cached), so its RSS is that of a binary read from disk,
whether or not it was just linked.
Python 3 standard library only.
"""

import argparse
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The fixed suite: (name, argv after kbq). Every language, every term kind
# (mode, model, size, gpus, nodes, hardware, precision, seq, intent, scale,
# filter, free text, stopwords), show and check, text and JSON.
SUITE = [
    ("en mode+model+gpus", ["peft qwen3 1 gpu"]),
    ("en same, json", ["peft qwen3 1 gpu", "--format", "json"]),
    ("en size", ["sft llama3 70b 16 gpus"]),
    ("en hardware+seq", ["SFT, 8×H100, 16K sequence"]),
    ("en nodes", ["pretrain deepseek v3 32 nodes"]),
    ("en precision", ["llama3 8b fp8 pretrain 8 gpus"]),
    ("en intent", ["first time trying bridge"]),
    ("en scale+free text", ["large scale pretrain llama3"]),
    ("en filter", ["qwen3 tp:2 sft"]),
    ("en benchmark, json", ["throughput benchmark llama3 8b h100", "--format", "json"]),
    ("en moe+free text", ["qwen3 moe 30b sft 16 gpus cuda graphs"]),
    ("fr mode+nodes", ["affinage llama3 8b sur 2 nœuds"]),
    ("fr intent+seq, json", ["pré-entraînement qwen3 contexte long 64k", "--format", "json"]),
    ("zh lora 1 gpu", ["在 1 个 GPU 上使用 LoRA"]),
    ("ja lora 1 gpu", ["qwen3 の LoRA を 1 GPU で"]),
    ("ja same, json", ["qwen3 の LoRA を 1 GPU で", "--format", "json"]),
    ("show", ["show", "llama3_70b_pretrain_config"]),
    ("show, json", ["show", "qwen3_30b_a3b_sft_config", "--format", "json"]),
    ("check", ["check", "llama3_70b_pretrain_config", "--gpus", "64", "model.tensor_model_parallel_size=16"]),
    ("check, json", ["check", "qwen3_30b_a3b_peft_config", "--gpus", "4", "model.expert_model_parallel_size=4",
                     "--format", "json"]),
]
# The subset timed at every scale (with --kb).
SCALE_SUITE = ["en mode+model+gpus", "en size", "en hardware+seq", "en filter", "en moe+free text", "ja lora 1 gpu",
               "show", "check"]
FLOOR_SQL = "SELECT count(*) FROM search WHERE search MATCH 'qwen3';"


class Run:
    __slots__ = ("seconds", "rss_kb", "status")

    def __init__(self, seconds, rss_kb, status):
        self.seconds, self.rss_kb, self.status = seconds, rss_kb, status


def spawn(argv, stdin_path="/dev/null", cwd=None, timeout=None):
    """Runs argv (no shell); returns wall seconds, max RSS (KiB) and the exit
    status (-9 when killed at `timeout` seconds)."""
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, stdin_path, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0),
    ]
    if cwd:
        old = os.getcwd()
        os.chdir(cwd)
    try:
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
        timer = threading.Timer(timeout, os.kill, (pid, signal.SIGKILL)) if timeout else None
        if timer:
            timer.start()
        _, status, ru = os.wait4(pid, 0)
        t1 = time.perf_counter()
        if timer:
            timer.cancel()
    finally:
        if cwd:
            os.chdir(old)
    return Run(t1 - t0, ru.ru_maxrss, os.waitstatus_to_exitcode(status))


def max_rss_kb(argv, stdin_path="/dev/null"):
    """Peak RSS (KiB) of argv, measured by /usr/bin/time -f %M (GNU time).

    wait4's ru_maxrss cannot be used from Python: Linux carries the parent's
    (the interpreter's) peak over exec into the child's figure. GNU time is a
    small C program, so what it reports is the program's own peak.
    """
    gnu_time = "/usr/bin/time"
    if not os.access(gnu_time, os.X_OK):
        return float("nan")
    fd, out = tempfile.mkstemp(prefix="kbq-bench-rss-")
    os.close(fd)
    try:
        r = spawn([gnu_time, "-f", "%M", "-o", out] + argv, stdin_path=stdin_path)
        text = open(out).read().strip().split("\n")[-1]
        return float(text) if text.isdigit() else float("nan")
    finally:
        os.unlink(out)


def pct(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def ms(x):
    return f"{x * 1000:7.2f}"


def mib(kb):
    return f"{kb / 1024:6.1f}"


def table(header, rows):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(header)]
    line = "  ".join(f"{h:<{w}}" if i == 0 else f"{h:>{w}}" for i, (h, w) in enumerate(zip(header, widths)))
    print(line)
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(f"{str(c):<{w}}" if i == 0 else f"{str(c):>{w}}" for i, (c, w) in enumerate(zip(r, widths))))
    print()


def tool(name):
    path = shutil.which(name)
    if not path:
        sys.exit(f"bench: '{name}' not found (apt-get install -y {name})")
    return path


def machine():
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    sqlite_v = subprocess.run([tool("sqlite3"), "--version"], capture_output=True, text=True).stdout.split()[0]
    cmark_v = subprocess.run([tool("cmark-gfm"), "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    load = os.getloadavg()
    print("== machine")
    print(f"cpu: {cpu}; nproc: {os.cpu_count()}; ram: {mem}; kernel: {platform.release()}")
    print(f"sqlite3 {sqlite_v}; {cmark_v}; load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print()


def latency(kbq, kb, runs, suite_names=None, embedded=True, floor=True):
    """Times the suite; returns {name: {"embedded": [Run], "file": [Run]}} and the floor runs."""
    sqlite3 = tool("sqlite3")
    suite = [(n, a) for n, a in SUITE if suite_names is None or n in suite_names]
    results = {n: {"embedded": [], "file": [], "rss_embedded": float("nan"), "rss_file": float("nan")} for n, _ in suite}
    floor_runs, true_runs = [], []
    # Interleave everything, round after round, so drift (other load on the
    # machine, CPU frequency) touches kbq and its floor alike.
    for _ in range(runs):
        for name, args in suite:
            if embedded:
                results[name]["embedded"].append(spawn([kbq] + args))
            results[name]["file"].append(spawn([kbq, "--kb", kb] + args))
            if floor:
                floor_runs.append(spawn([sqlite3, "-readonly", kb, FLOOR_SQL]))
                true_runs.append(spawn(["/bin/true"]))
    for name, args in suite:
        if embedded:
            results[name]["rss_embedded"] = max_rss_kb([kbq] + args)
        results[name]["rss_file"] = max_rss_kb([kbq, "--kb", kb] + args)
    if floor:
        floor_runs[0].rss_kb = max_rss_kb([sqlite3, "-readonly", kb, FLOOR_SQL])
    return results, floor_runs, true_runs


def print_latency(results, floor_runs, true_runs, runs):
    floor_med = statistics.median(r.seconds for r in floor_runs)
    print(f"== 1. kbq latency: {len(results)} queries x {runs} runs, wall ms start->exit (p10 / median / p90)")
    print(f"floor: sqlite3 -readonly KB \"{FLOOR_SQL}\": median {ms(floor_med).strip()} ms, "
          f"p10 {ms(pct([r.seconds for r in floor_runs], 10)).strip()}, p90 {ms(pct([r.seconds for r in floor_runs], 90)).strip()}, "
          f"max RSS {mib(floor_runs[0].rss_kb).strip()} MiB "
          f"(spawning /bin/true alone: {ms(statistics.median(r.seconds for r in true_runs)).strip()} ms)")
    rows = []
    all_emb, all_file = [], []
    for name, by in results.items():
        e = [r.seconds for r in by["embedded"]]
        f = [r.seconds for r in by["file"]]
        all_emb += e
        all_file += f
        codes = sorted({r.status for r in by["embedded"] + by["file"]})
        rows.append([name, ms(pct(e, 10)), ms(statistics.median(e)), ms(pct(e, 90)), f"{statistics.median(e) / floor_med:5.2f}x",
                     ms(pct(f, 10)), ms(statistics.median(f)), ms(pct(f, 90)), f"{statistics.median(f) / floor_med:5.2f}x",
                     mib(by["rss_embedded"]), mib(by["rss_file"]),
                     ",".join(map(str, codes))])
    med_e = statistics.median(statistics.median(r.seconds for r in by["embedded"]) for by in results.values())
    med_f = statistics.median(statistics.median(r.seconds for r in by["file"]) for by in results.values())
    rows.append(["ALL (median of medians)", ms(pct(all_emb, 10)), ms(med_e), ms(pct(all_emb, 90)), f"{med_e / floor_med:5.2f}x",
                 ms(pct(all_file, 10)), ms(med_f), ms(pct(all_file, 90)), f"{med_f / floor_med:5.2f}x",
                 mib(max(by["rss_embedded"] for by in results.values())),
                 mib(max(by["rss_file"] for by in results.values())), ""])
    table(["query", "emb p10", "emb med", "emb p90", "/floor", "file p10", "file med", "file p90", "/floor",
           "RSS emb", "RSS file", "exit"], rows)
    target = 1.5
    print(f"target: kbq median <= {target}x floor: embedded {med_e / floor_med:.2f}x "
          f"({'met' if med_e / floor_med <= target else 'MISSED'}), --kb {med_f / floor_med:.2f}x "
          f"({'met' if med_f / floor_med <= target else 'MISSED'}); peak RSS target 16 MiB: "
          f"{max(max(by['rss_embedded'], by['rss_file']) for by in results.values()) / 1024:.1f} MiB "
          f"({'met' if max(max(by['rss_embedded'], by['rss_file']) for by in results.values()) <= 16 * 1024 else 'MISSED'})")
    print()
    return med_e, med_f, floor_med


def questions_tsv():
    out = []
    for line in open(os.path.join(ROOT, "tests", "questions.tsv"), encoding="utf-8"):
        line = line.rstrip("\n")
        if line and not line.startswith("#") and not line.startswith("question\t"):
            out.append(line.split("\t")[0])
    return out


def names_a_model(kbq, question):
    """Whether a question names a model: its canonical form (kbq's JSON) has a model term."""
    p = subprocess.run([kbq, "--format", "json", question], capture_output=True, text=True)
    try:
        import json
        canonical = json.loads(p.stdout)["query"]["canonical"]
    except (ValueError, KeyError):
        return False
    return any(t.startswith("model:") for t in canonical.split())


def question_bench(kbq, kb, runs):
    """Every question of tests/questions.tsv and the suite's show and check, interleaved with the floor."""
    sqlite3 = tool("sqlite3")
    cases = [("with model" if names_a_model(kbq, q) else "without model", q, [q]) for q in questions_tsv()]
    cases += [("show", " ".join(a), a) for n, a in SUITE if n.startswith("show")]
    cases += [("check", " ".join(a), a) for n, a in SUITE if n.startswith("check")]
    times = {i: [] for i in range(len(cases))}
    floor_runs = []
    for _ in range(runs):
        for i, (_, _, args) in enumerate(cases):
            times[i].append(spawn([kbq] + args).seconds)
            floor_runs.append(spawn([sqlite3, "-readonly", kb, FLOOR_SQL]).seconds)
    floor_med = statistics.median(floor_runs)
    rss = {i: max_rss_kb([kbq] + args) for i, (_, _, args) in enumerate(cases)}
    return cases, times, rss, floor_med


def print_questions(cases, times, rss, floor_med, runs):
    print(f"== 5. every question of tests/questions.tsv ({sum(1 for c in cases if c[0].startswith('with'))} questions) "
          f"and the suite's show and check, {runs} runs each, embedded KB; ratio = the question's median / the floor's "
          f"median ({ms(floor_med).strip()} ms)")
    rows, all_ratios, worst_all, rss_all = [], [], 0.0, 0.0
    for klass in ("with model", "without model", "show", "check"):
        idx = [i for i, c in enumerate(cases) if c[0] == klass]
        if not idx:
            continue
        ratios = [statistics.median(times[i]) / floor_med for i in idx]
        all_ratios += ratios
        worst = max(range(len(idx)), key=lambda k: ratios[k])
        rmax = max(rss[i] for i in idx)
        worst_all, rss_all = max(worst_all, max(ratios)), max(rss_all, rmax)
        rows.append([klass, str(len(idx)), ms(statistics.median(statistics.median(times[i]) for i in idx)),
                     f"{statistics.median(ratios):5.2f}x", f"{max(ratios):5.2f}x", cases[idx[worst]][1][:40], mib(rmax)])
    table(["class", "n", "median ms", "median /floor", "worst /floor", "worst question", "max RSS MiB"], rows)
    med = statistics.median(all_ratios)
    print(f"target: median <= 1.5x floor: {med:.2f}x ({'met' if med <= 1.5 else 'MISSED'}); worst <= 2x: {worst_all:.2f}x "
          f"({'met' if worst_all <= 2 else 'MISSED'}); RSS <= 16 MiB: {rss_all / 1024:.1f} MiB ({'met' if rss_all <= 16 * 1024 else 'MISSED'})")
    slow = sorted(range(len(cases)), key=lambda i: -statistics.median(times[i]))[:5]
    print("slowest: " + "; ".join(f"{cases[i][1][:40]!r} {statistics.median(times[i]) / floor_med:.2f}x" for i in slow))
    print()


def batch_bench(kbq, tmp, runs=3):
    """The finder grid through one --batch process per language: ms per answer (best of `runs`)."""
    import json
    index = json.load(open(os.path.join(ROOT, "generated", "site", "finder.json"), encoding="utf-8"))
    qs = [index["question"].format(mode=mode, model=m["question"], gpus=n, hardware=hw["key"])
          for m in index["models"] for mode in m["modes"] for n in index["gpu_counts"] for hw in index["hardware"]]
    path = os.path.join(tmp, "grid.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(q + "\n" for q in qs))
    # The parts of each record the site reads (site/build.py's SELECT).
    sys.path.insert(0, os.path.join(ROOT, "site"))
    from build import SELECT
    rows, per = [], []
    for lang in sorted(index["mode_words"]):
        best = min(spawn([kbq, "--batch", "--lang", lang], stdin_path=path).seconds for _ in range(runs))
        rss = max_rss_kb([kbq, "--batch", "--lang", lang], stdin_path=path)
        selected = min(spawn([kbq, "--batch", "--lang", lang, "--select", ",".join(SELECT)], stdin_path=path).seconds
                       for _ in range(runs))
        per.append(best / len(qs))
        rows.append([lang, str(len(qs)), f"{best:.2f}", f"{best / len(qs) * 1000:.3f}", mib(rss),
                     f"{selected / len(qs) * 1000:.3f}"])
    print(f"== 6. --batch: the recipe finder's grid (generated/site/finder.json), one kbq --batch process per language, "
          f"best of {runs}")
    table(["lang", "answers", "s", "ms/answer", "max RSS MiB", "ms/answer, the site's --select"], rows)
    worst = max(per) * 1000
    print(f"target: <= 0.5 ms per answer: {worst:.3f} ms ({'met' if worst <= 0.5 else 'MISSED'})")
    print()


def size_report(build):
    kbq = os.path.join(build, "kbq")
    stripped = tempfile.mktemp(prefix="kbq-stripped-")
    subprocess.run(["strip", "-o", stripped, kbq], check=True)
    rows = [["embedded KB (kbq.sqlite, kbc build --runtime)", f"{os.path.getsize(os.path.join(build, 'kbq.sqlite')) / 1e6:.2f}", "<= 4"],
            ["full KB (kb.sqlite)", f"{os.path.getsize(os.path.join(build, 'kb.sqlite')) / 1e6:.2f}", ""],
            ["kbq as built", f"{os.path.getsize(kbq) / 1e6:.2f}", ""],
            ["kbq stripped", f"{os.path.getsize(stripped) / 1e6:.2f}", "<= 8"]]
    os.unlink(stripped)
    print("== 7. sizes (MB)")
    table(["file", "MB", "target"], rows)


def md_files(sources):
    out = []
    for dirpath, dirs, files in os.walk(sources):
        dirs.sort()
        if os.path.basename(dirpath) == "data" and os.path.dirname(dirpath) == sources.rstrip("/"):
            dirs[:] = []
            continue
        out += [os.path.join(dirpath, f) for f in sorted(files) if f.endswith(".md") and f != "README.md"]
    return out


def build_bench(kbc, sources, runs, tmp):
    """kbc build of `sources` `runs` times beside the cmark-gfm + sqlite3 floor."""
    cmark = tool("cmark-gfm")
    sqlite3 = tool("sqlite3")
    out = os.path.join(tmp, "kb.sqlite")
    kbc_runs = [spawn([kbc, "build", "--sources", sources, "-o", out, "--quiet"]) for _ in range(runs)]
    if any(r.status != 0 for r in kbc_runs):
        sys.exit("bench: kbc build failed on " + sources)
    size = os.path.getsize(out)
    # The floor's input: the schema, then the KB's rows as INSERTs, in one
    # transaction, as kbc writes them.
    sql_path = os.path.join(tmp, "rows.sql")
    dump = subprocess.run([kbc, "dump", "--kb", out, "--format", "sql"], capture_output=True, check=True).stdout
    with open(sql_path, "wb") as f:
        f.write(b"PRAGMA journal_mode=DELETE;\nBEGIN;\n")
        f.write(open(os.path.join(ROOT, "base", "schema.sql"), "rb").read())
        f.write(b"\n")
        f.write(dump)
        f.write(b"\nCOMMIT;\n")
    rows = dump.count(b"\nINSERT ") + (1 if dump.startswith(b"INSERT ") else 0)
    files = md_files(sources)
    cmark_runs, sqlite_runs = [], []
    for _ in range(runs):
        cmark_runs.append(spawn([cmark, "-e", "table", "--to", "html"] + files))
        target = os.path.join(tmp, "floor.sqlite")
        if os.path.exists(target):
            os.unlink(target)
        sqlite_runs.append(spawn([sqlite3, target], stdin_path=sql_path))
    if any(r.status != 0 for r in sqlite_runs):
        sys.exit("bench: sqlite3 could not load the floor's SQL " + sql_path)
    kbc_runs[0].rss_kb = max_rss_kb([kbc, "build", "--sources", sources, "-o", out, "--quiet"])
    cmark_runs[0].rss_kb = max_rss_kb([cmark, "-e", "table", "--to", "html"] + files)
    os.unlink(os.path.join(tmp, "floor.sqlite"))
    sqlite_runs[0].rss_kb = max_rss_kb([sqlite3, os.path.join(tmp, "floor.sqlite")], stdin_path=sql_path)
    return kbc_runs, cmark_runs, sqlite_runs, size, rows, len(files)


def print_build(kbc_runs, cmark_runs, sqlite_runs, size, rows, nfiles, runs):
    k = statistics.median(r.seconds for r in kbc_runs)
    c = statistics.median(r.seconds for r in cmark_runs)
    s = statistics.median(r.seconds for r in sqlite_runs)
    print(f"== 2. kbc build of kb-sources: {nfiles} markdown files, {rows} rows, KB {size / 1024:.0f} KiB; median of {runs}")
    table(["process", "p10 ms", "median ms", "p90 ms", "max RSS MiB"], [
        ["kbc build", ms(pct([r.seconds for r in kbc_runs], 10)), ms(k), ms(pct([r.seconds for r in kbc_runs], 90)),
         mib(kbc_runs[0].rss_kb)],
        ["floor: cmark-gfm -e table", ms(pct([r.seconds for r in cmark_runs], 10)), ms(c), ms(pct([r.seconds for r in cmark_runs], 90)),
         mib(cmark_runs[0].rss_kb)],
        ["floor: sqlite3 < schema + rows", ms(pct([r.seconds for r in sqlite_runs], 10)), ms(s), ms(pct([r.seconds for r in sqlite_runs], 90)),
         mib(sqlite_runs[0].rss_kb)],
        ["floor total", "", ms(c + s), "", ""],
    ])
    print(f"ratio kbc / floor: {k / (c + s):.2f}x (target <= 2x: {'met' if k / (c + s) <= 2 else 'MISSED'})")
    print()
    return k, c + s


def scale_bench(kbc, kbq, scales, runs, tmp, timeout, base, query_timeout=60, slow_notes=None, per_query_out=None):
    """Per scale: generate, build (median of up to 3), KB size, kbq latency with --kb, RSS."""
    rows = []
    slow_notes = [] if slow_notes is None else slow_notes
    base_lat = base["lat"]
    base_build = base["build"]
    for s in scales:
        src = os.path.join(tmp, f"sources-{s}x")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_sources.py"), "--scale", str(s), "--out", src,
                        "--sources", os.path.join(ROOT, "kb-sources")], check=True, stderr=subprocess.DEVNULL)
        gen_s = time.perf_counter() - t0
        nbytes = sum(os.path.getsize(f) for f in md_files(src))
        out = os.path.join(tmp, f"kb-{s}x.sqlite")
        builds = []
        started = time.perf_counter()
        for i in range(3):
            r = spawn([kbc, "build", "--sources", src, "-o", out, "--quiet"])
            builds.append(r)
            if r.status != 0:
                sys.exit(f"bench: kbc build failed at scale {s}")
            if time.perf_counter() - started > timeout / 3 or r.seconds > 20:
                break
        b = statistics.median(r.seconds for r in builds)
        rss_c = max_rss_kb([kbc, "build", "--sources", src, "-o", out, "--quiet"])
        # kbq with --kb: up to `runs` runs per query; a query slower than a
        # second gets 3 runs, one slower than 20 s a single run, and a run is
        # killed at `query_timeout` (its time then counts as the limit).
        per_query, timeouts, rss_q = [], 0, 0.0
        for name, args in SUITE:
            if name not in SCALE_SUITE:
                continue
            first = spawn([kbq, "--kb", out] + args, timeout=query_timeout)
            times = [first.seconds]
            timeouts += first.status == -9
            n = runs if first.seconds < 1 else 3 if first.seconds < 20 else 1
            for _ in range(n - 1):
                r = spawn([kbq, "--kb", out] + args, timeout=query_timeout)
                times.append(r.seconds)
                timeouts += r.status == -9
            per_query.append((name, statistics.median(times), pct(times, 90)))
            if per_query_out is not None:
                per_query_out.setdefault(name, {})[s] = (statistics.median(times), first.status == -9)
            if first.seconds < 20:
                rss_q = max(rss_q, max_rss_kb([kbq, "--kb", out] + args))
        lat = statistics.median(m for _, m, _ in per_query)
        p90 = max(p for _, _, p in per_query)
        slowest = max(per_query, key=lambda x: x[1])
        slow_notes.append(f"{s}x: slowest query '{slowest[0]}' median {slowest[1]:.2f} s"
                          + (f"; {timeouts} run(s) killed at {query_timeout:.0f} s" if timeouts else ""))
        recipes = subprocess.run([tool("sqlite3"), "-readonly", out, "SELECT count(*) FROM recipes"], capture_output=True,
                                 text=True).stdout.strip()
        rows.append([f"{s}x", recipes, f"{nbytes / 1e6:.1f}", f"{b:.2f}", f"{b / base_build:.0f}x", f"{os.path.getsize(out) / 1e6:.1f}",
                     mib(rss_c), ms(lat), ms(p90), f"{lat / base_lat:.2f}x", mib(rss_q) if rss_q else "  n/a", f"{gen_s:.1f}"])
        shutil.rmtree(src, ignore_errors=True)
        print(f"   scale {s}x done: build {b:.2f} s, kbq {lat * 1000:.1f} ms", file=sys.stderr, flush=True)
    return rows


def code_scale_bench(kbc, kbq, build, code_scales, runs, tmp):
    """Per code scale M: the recipes kbq answers from M times (gen_sources.py
    --code-scale M: the newest snapshot's exported recipes and their facts),
    compiled as kbq embeds them (kbc build --runtime) and built into a kbq of
    their own (kbq_bench_kb, cmake -DKBQ_BENCH_KB), so the answer is timed as
    users run kbq, without --kb's checks of an untrusted file (which read the
    whole file: section 3-4 times those). The scale suite's queries, each run
    `runs` times, 1x and every scale interleaved."""
    programs = [(1, kbq, os.path.getsize(os.path.join(build, "kbq.sqlite")))]
    try:
        for m in code_scales:
            src = os.path.join(tmp, f"code-{m}x")
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_sources.py"), "--scale", "1", "--code-scale", str(m),
                            "--out", src, "--sources", os.path.join(ROOT, "kb-sources")], check=True, stderr=subprocess.DEVNULL)
            kb = os.path.join(tmp, f"kb-code-{m}x.sqlite")
            if spawn([kbc, "build", "--runtime", "--sources", src, "-o", kb, "--quiet"]).status != 0:
                sys.exit(f"bench: kbc build --runtime failed at code scale {m}")
            shutil.rmtree(src, ignore_errors=True)
            subprocess.run(["cmake", f"-DKBQ_BENCH_KB={kb}", build], check=True, stdout=subprocess.DEVNULL)
            subprocess.run(["cmake", "--build", build, "--target", "kbq_bench_kb"], check=True, stdout=subprocess.DEVNULL)
            prog = os.path.join(tmp, f"kbq-code-{m}x")
            shutil.copy2(os.path.join(build, "kbq_bench_kb"), prog)
            drop_cached(prog)
            programs.append((m, prog, os.path.getsize(kb)))
            print(f"   code scale {m}x built: runtime KB {os.path.getsize(kb) / 1e6:.1f} MB", file=sys.stderr, flush=True)
    finally:
        subprocess.run(["cmake", "-DKBQ_BENCH_KB=", build], stdout=subprocess.DEVNULL)
    by_query = []
    for name, args in SUITE:
        if name not in SCALE_SUITE:
            continue
        times = {m: [] for m, _, _ in programs}
        for _ in range(runs):
            for m, prog, _ in programs:
                times[m].append(spawn([prog] + args).seconds)
        rss = {m: max_rss_kb([prog] + args) for m, prog, _ in programs}
        by_query.append((name, {m: statistics.median(t) for m, t in times.items()}, rss))
    return programs, by_query


def print_code_scale(programs, by_query, runs):
    scales = [m for m, _, _ in programs]
    print(f"== 3c. code scale: the recipes kbq answers from multiplied (bench/gen_sources.py --code-scale), each KB "
          f"embedded in a kbq of its own; median of {runs} runs per query, interleaved")
    table([""] + [f"{m}x" for m in scales], [["runtime KB, MB"] + [f"{size / 1e6:.1f}" for _, _, size in programs]])
    rows, worst = [], {m: 0.0 for m in scales[1:]}
    for name, med, rss in by_query:
        cells = [name, ms(med[1])]
        for m in scales[1:]:
            ratio = med[m] / med[1]
            worst[m] = max(worst[m], ratio)
            cells += [ms(med[m]), f"{ratio:.2f}x", mib(rss[m])]
        rows.append(cells)
    table(["query", "1x ms"] + [c for m in scales[1:] for c in (f"{m}x ms", "vs 1x", "RSS MiB")], rows)
    for m in scales[1:]:
        print(f"target: an answer at {m}x within 2x of its 1x time: worst {worst[m]:.2f}x "
              f"({'met' if worst[m] <= 2 else 'MISSED'})")
    print()


def drop_cached(path):
    """Drops a file's pages from the page cache (written back first), so the
    next run reads it from disk as after a reboot. kbq's RSS depends on it:
    right after a link, the pages the linker wrote are still cached in the
    large folios its writes made, and a fault maps more of the embedded KB
    than a cold read does (about 0.45 MB more on this VM's kernel)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def main():
    ap = argparse.ArgumentParser(description="kbq/kbc benchmarks against their floors")
    ap.add_argument("--build", default="build-bench", help="build folder with kbc and kbq (make bench: the build type users run)")
    ap.add_argument("--runs", type=int, default=30, help="runs per kbq query (default 30)")
    ap.add_argument("--build-runs", type=int, default=10, help="kbc builds of kb-sources (default 10)")
    ap.add_argument("--scales", default="10 100 1000", help='scales, e.g. "10 100" (empty: none)')
    ap.add_argument("--code-scales", default="10", help='code scales (section 3c), e.g. "4 10" (empty: none)')
    ap.add_argument("--scale-timeout", type=float, default=1800, help="seconds per scale for its builds (default 1800)")
    ap.add_argument("--query-timeout", type=float, default=60, help="seconds before a scale kbq run is killed (default 60)")
    ap.add_argument("--question-runs", type=int, default=10, help="runs per question of tests/questions.tsv (default 10)")
    ap.add_argument("--skip", default="", help="comma-separated sections to skip: latency,build,scale,codescale,parser,questions,batch,sizes")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    kbc, kbq = os.path.join(build, "kbc"), os.path.join(build, "kbq")
    for p in (kbc, kbq):
        if not os.access(p, os.X_OK):
            sys.exit(f"bench: {p} not found; run `make bench`")
    skip = set(filter(None, a.skip.split(",")))
    machine()
    drop_cached(kbq)
    print("kbq read cold: its pages dropped from the page cache first (drop_cached)\n")
    tmp = tempfile.mkdtemp(prefix="kbq-bench-")
    try:
        kb = os.path.join(tmp, "real.sqlite")
        subprocess.run([kbc, "build", "--sources", os.path.join(ROOT, "kb-sources"), "-o", kb, "--quiet"], check=True)
        if "latency" not in skip:
            results, floor_runs, true_runs = latency(kbq, kb, a.runs)
            print_latency(results, floor_runs, true_runs, a.runs)
        if "questions" not in skip:
            print_questions(*question_bench(kbq, kb, a.question_runs), a.question_runs)
        if "batch" not in skip:
            batch_bench(kbq, tmp)
        if "sizes" not in skip:
            size_report(build)
        if "build" not in skip:
            print_build(*build_bench(kbc, os.path.join(ROOT, "kb-sources"), a.build_runs, tmp), a.build_runs)
        scales = [int(s) for s in a.scales.split()]
        if "scale" not in skip and scales:
            # The 1x row, measured like the others (the latency subset, --kb).
            notes, by_query = [], {}
            one = scale_bench(kbc, kbq, [1], a.runs, tmp, a.scale_timeout, {"lat": 1, "build": 1}, a.query_timeout, notes,
                              by_query)[0]
            base = {"build": float(one[3]), "lat": float(one[7]) / 1000}
            one[4] = "1x"
            one[9] = "1.00x"
            rows = [one] + scale_bench(kbc, kbq, scales, a.runs, tmp, a.scale_timeout, base, a.query_timeout, notes, by_query)
            print(f"== 3-4. scale: synthetic sources (bench/gen_sources.py); kbq --kb: median over {len(SCALE_SUITE)} queries "
                  f"of each query's median ({a.runs} runs; 3 when a run takes > 1 s, 1 when > 20 s); p90 = the worst "
                  f"query's p90; build = median of up to 3")
            table(["scale", "recipes", "md MB", "build s", "vs 1x", "KB MB", "kbc RSS MiB", "kbq med ms", "kbq p90 ms",
                   "vs 1x", "kbq RSS MiB", "gen s"], rows)
            for n in notes:
                print("   " + n)
            print()
            print(f"kbq --kb median ms per query and scale ('>' = killed at {a.query_timeout:.0f} s):")
            all_scales = [1] + scales
            qrows = []
            for name in SCALE_SUITE:
                cells = []
                for sc in all_scales:
                    med, killed = by_query.get(name, {}).get(sc, (float("nan"), False))
                    cells.append((">" if killed else "") + f"{med * 1000:.1f}")
                qrows.append([name] + cells)
            table(["query"] + [f"{sc}x" for sc in all_scales], qrows)
            last = rows[-1]
            print(f"target: kbq at {last[0]} within 2x of 1x: {last[9].strip()} "
                  f"({'met' if float(last[9].strip().rstrip('x')) <= 2 else 'MISSED'}); build growth: see 'vs 1x' against the scale")
            print()
        code_scales = [int(s) for s in a.code_scales.split()]
        if "codescale" not in skip and code_scales:
            print_code_scale(*code_scale_bench(kbc, kbq, build, code_scales, a.runs, tmp), a.runs)
        dsl_bench = os.path.join(build, "kb_dsl_bench")
        if "parser" not in skip and os.access(dsl_bench, os.X_OK):
            print("== 8. the query parser: kbq::dsl::parse() on one line of each shape and size, best of 3 "
                  "(bench/dsl_bench.cpp; kbq itself refuses a question over its length limit)", flush=True)
            r = subprocess.run([dsl_bench, "--runs", "3"])
            print(f"target: linear ({'met' if r.returncode == 0 else 'MISSED'})")
            print()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
