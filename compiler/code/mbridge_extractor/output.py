"""The output files: their names, comment headers and rows; writing them atomically; checking them."""

import difflib
import os
import tempfile


FILES = ("snapshot.tsv", "recipes.tsv", "recipe-facts.tsv", "launcher.tsv", "config-keys.tsv", "providers.tsv",
         "datasets.tsv")

HEADERS = {
    "snapshot.tsv": (
        "# One Megatron Bridge snapshot read by compiler/code/extract_mbridge.py: key/value rows.\n"
        "# repo, commit, date: the checkout; extractor: the extractor version; counts: what was found.\n",
        ("key", "value")),
    "recipes.tsv": (
        "# Every recipe name exported by the library and benchmark packages (kind), one row per (name, kind).\n"
        "# target: module.function that defines it; defined_at: its `def` line; exported_at: the binding in the\n"
        "# exporting package (star import, import or alias); chain: every hop from there to the def, ' > '-joined;\n"
        "# alias_of: the defining function's name when the exported name differs from it.\n"
        "# mode: the launcher's own inference from the name (see launcher.tsv mode-rule); family: the launcher's\n"
        "# benchmark family rule; model/task/gpus/hardware/precision/variant: the name parsed with the launcher's\n"
        "# benchmark pattern (launcher.tsv name-pattern), empty when the name does not match it.\n"
        "# step: the forward step the launcher runs the name with (its own rule, code-layout.tsv step-rule;\n"
        "# text models run llm_step, vision-language, audio and diffusion models their own), empty when unknown.\n"
        "# Paths are relative to the checkout root.\n",
        ("name", "kind", "target", "defined_at", "exported_at", "alias_of", "mode", "family", "model", "task",
         "gpus", "hardware", "precision", "variant", "step", "chain")),
    "recipe-facts.tsv": (
        "# Facts of each recipe function (target), evaluated statically with its default arguments.\n"
        "# field: a row of kb-sources/data/code-fields.tsv (which config path and view it reads).\n"
        "# state: value (set by the code) | default (a default: of a snapshot dataclass field, or -- when the code\n"
        "#   never sets it -- the external default cited in note) | alternatives (depends on a condition the\n"
        "#   extractor cannot decide; note says which) | unknown (not computable; note says why).\n"
        "# value: the value; alternatives joined by '|' (a '|' inside a value is written '\\|'; tab, newline and\n"
        "#   backslash are escaped as \\t \\n \\\\). true/false/none are Python's True/False/None; type says which.\n"
        "# type: the Python type of each alternative (int, float, bool, none, str, list, dict, tuple, object, ref,\n"
        "#   unknown), '|'-joined like value. at: the path:line that set it, one per alternative.\n",
        ("target", "field", "state", "value", "type", "at", "note")),
    "launcher.tsv": (
        "# What the launchers (scripts/training) say, as (section, item, attribute, value, at) rows.\n"
        "# flag: one argparse option per item `<parser>:<dest>`: options, short, long, group, type, action,\n"
        "#   metavar, help, default, choices (space-separated) and config_key (from the launcher's override table).\n"
        "# mode-rule: the tokens infer_recipe_mode tests, in order, and the mode each returns.\n"
        "# mode: each public mode with the task and training loop the launcher maps it to.\n"
        "# runner-step: the calls of the runner's entry function in order, each with its docstring and the\n"
        "#   attribute assignments it makes (e.g. config.model.seq_length = dataset_seq_length); applies-overrides\n"
        "#   marks the call that applies the command line's KEY=VALUE overrides; reads-overrides: another call that is\n"
        "#   passed them too (it can tell an explicit override from the recipe's value).\n"
        "# launch: what the benchmark launch script executes; name-pattern, family-rule: the launcher's own rules.\n",
        ("section", "item", "attribute", "value", "at")),
    "config-keys.tsv": (
        "# Override keys of ConfigContainer: every dataclass field the snapshot defines, as dotted keys.\n"
        "# kind: section (a dataclass; class = its qualname; type = open when some base class is outside the\n"
        "#   snapshot, so keys not listed may still exist; default lists those external bases) | field (class:\n"
        "#   the dataclass that declares it; type: annotation text; default: default expression or `factory X`\n"
        "#   or (required)) | external-field (a key of an external base documented in code-fields.tsv, with the\n"
        "#   cited default in default and source).\n",
        ("key", "kind", "class", "type", "default", "source", "at")),
    "providers.tsv": (
        "# Model architecture per model provider the recipes use: a snapshot provider class (its dataclass\n"
        "# defaults) or a Hugging Face id (hf:<id>; the architecture comes from models.tsv by hf_id).\n"
        "# field: an architecture row of code-fields.tsv; state/value/type/at/note as in recipe-facts.tsv;\n"
        "# targets: how many recipe functions use this provider.\n",
        ("provider", "field", "state", "value", "type", "at", "note", "targets")),
    "datasets.tsv": (
        "# The launcher's --dataset presets: builder (the function the preset calls; arg:* its bound arguments),\n"
        "# returns (the config class it builds; note says whether evaluated or read from the return annotation),\n"
        "# train_mode (what dataset_train_mode says for it: pretrain, finetune or none = any) and modes (the\n"
        "# public modes the launcher accepts with it).\n",
        ("preset", "attribute", "value", "at", "note")),
}


def tsv_text(fname, rows):
    comment, header = HEADERS[fname]
    out = [comment.rstrip("\n"), "\t".join(header)]
    for r in sorted(set(rows)):
        out.append("\t".join(r))
    return "\n".join(out) + "\n"

def write_files(out_dir, files):
    """Write every file to a temporary name first, then rename them all: a failure leaves nothing new."""
    os.makedirs(out_dir, exist_ok=True)
    tmps = []
    try:
        for name in sorted(files):
            fd, tmp = tempfile.mkstemp(prefix="." + name + ".", dir=out_dir)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(files[name])
            tmps.append((tmp, os.path.join(out_dir, name)))
        for tmp, final in tmps:
            os.replace(tmp, final)
    finally:
        for tmp, _ in tmps:
            if os.path.exists(tmp):
                os.unlink(tmp)


def check_files(out_dir, files):
    """Compare with files on disk; print a unified diff summary; True when identical."""
    same = True
    for name in sorted(files):
        path = os.path.join(out_dir, name)
        try:
            with open(path, encoding="utf-8") as f:
                old = f.read()
        except OSError:
            old = None
        if old == files[name]:
            continue
        same = False
        if old is None:
            print("%s: missing" % path)
            continue
        diff = list(difflib.unified_diff(old.split("\n"), files[name].split("\n"), path, "(extracted)", lineterm="",
                                         n=0))
        adds = sum(1 for l in diff if l.startswith("+") and not l.startswith("+++"))
        dels = sum(1 for l in diff if l.startswith("-") and not l.startswith("---"))
        print("%s: differs (+%d -%d lines)" % (path, adds, dels))
        for l in diff[:40]:
            print(l)
        if len(diff) > 40:
            print("... %d more diff lines" % (len(diff) - 40))
    return same
