#!/usr/bin/env python3
"""THROWAWAY calibration helper (not part of kbq): read the layouts of the
Megatron Bridge recipes whose names carry a GPU count and hardware.

It runs each recipe function of the snapshot with every import outside
megatron.bridge.recipes / megatron.bridge.perf_recipes replaced by a
permissive stub, so the recipe's own assignments (cfg.model.* = ...) are
recorded without torch or Megatron installed. Fields a recipe never sets
keep Megatron's defaults (DEFAULTS below). The real static extractor is
another engineer's job; this script only feeds calib/cases.tsv.

Usage: python3 calib/extract_cases.py SNAPSHOT_SRC > calib/recipes-raw.json
"""
import importlib
import importlib.abc
import importlib.machinery
import json
import os
import re
import sys
import types

SRC = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/upstream/megatron-bridge/067f987df/src"

# Megatron-Core / Bridge defaults for fields a recipe may leave unset
# (TransformerConfig / ModelParallelConfig / TrainingConfig defaults).
DEFAULTS = {
    "tensor_model_parallel_size": 1,
    "pipeline_model_parallel_size": 1,
    "virtual_pipeline_model_parallel_size": None,
    "context_parallel_size": 1,
    "expert_model_parallel_size": 1,
    "expert_tensor_parallel_size": None,
    "sequence_parallel": False,
    "recompute_granularity": None,
    "recompute_method": None,
    "recompute_num_layers": None,
    "recompute_modules": None,
    "pipeline_model_parallel_layout": None,
    "use_distributed_optimizer": False,
    "use_megatron_fsdp": False,
    "grad_reduce_in_fp32": False,
    "micro_batch_size": 1,
    "global_batch_size": None,
    "seq_length": None,
    "fp8": None,
    "fp8_param": False,
    "fp8_param_gather": False,
    "use_precision_aware_optimizer": False,
    "optimizer_cpu_offload": False,
    "fine_grained_activation_offloading": False,
    "offload_modules": None,
    "mtp_num_layers": None,
    "cuda_graph_impl": None,
    "cuda_graph_scope": None,
    "num_layers_in_first_pipeline_stage": None,
    "num_layers_in_last_pipeline_stage": None,
    "account_for_embedding_in_pipeline_split": False,
    "account_for_loss_in_pipeline_split": False,
    "peft": None,
}


class Unknown:
    """A value nobody set: falsy, compares unequal, absorbs calls and attributes."""

    def __init__(self, origin=None):
        object.__setattr__(self, "_d", {})
        object.__setattr__(self, "_origin", origin)

    def __getattr__(self, k):
        if k.startswith("__"):
            raise AttributeError(k)
        d = object.__getattribute__(self, "_d")
        if k in d:
            return d[k]
        if k in DEFAULTS:
            return DEFAULTS[k]
        v = Unknown((self, k, None))
        d[k] = v
        return v

    def __setattr__(self, k, v):
        self._d[k] = v

    def __call__(self, *a, **kw):
        if len(a) == 1 and not kw and callable(a[0]) and isinstance(a[0], types.FunctionType):
            return a[0]
        return Unknown((self, "()", a))

    def __bool__(self):
        return False

    def __eq__(self, o):
        return self is o

    def __hash__(self):
        return id(self)

    def __lt__(self, o):
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __contains__(self, o):
        return False

    def __getitem__(self, k):
        return Unknown((self, "[]", (k,)))

    def __setitem__(self, k, v):
        pass

    def __add__(self, o):
        return self

    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __floordiv__ = __mod__ = __add__

    def __int__(self):
        return 0

    def __index__(self):
        return 0

    def __repr__(self):
        return "Unknown"


class Bag(Unknown):
    """An instance of a stubbed class: records constructor kwargs and later assignments."""

    _stub_name = "?"

    def __init__(self, *a, **kw):
        super().__init__(("new", type(self)._stub_name, a))
        for k, v in kw.items():
            self._d[k] = v

    def __bool__(self):
        return True

    def __repr__(self):
        return f"<{type(self)._stub_name}>"


class StubMeta(type):
    def __getattr__(cls, k):
        if k.startswith("__"):
            raise AttributeError(k)
        name = f"{cls._stub_name}.{k}"

        def method(*a, **kw):
            if len(a) == 1 and not kw and isinstance(a[0], types.FunctionType):
                return a[0]
            return Unknown(("call", name, a))

        return method

    def __call__(cls, *a, **kw):
        if len(a) == 1 and not kw and isinstance(a[0], types.FunctionType):
            return a[0]  # used as a decorator
        return super().__call__(*a, **kw)


def stub_class(name):
    return StubMeta(name.rsplit(".", 1)[-1], (Bag,), {"_stub_name": name})


class StubModule(types.ModuleType):
    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []
        self.__all__ = []
        self._cache = {}

    def __getattr__(self, k):
        if k.startswith("__"):
            raise AttributeError(k)
        if k not in self._cache:
            self._cache[k] = stub_class(f"{self.__name__}.{k}")
        return self._cache[k]


REAL_PREFIXES = ("megatron.bridge.recipes", "megatron.bridge.perf_recipes", "megatron.bridge.training.mixed_precision")
# Stubbed packages that still need their real folder so a real submodule can load.
PATH_PACKAGES = ("megatron.bridge.training",)


class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        top = fullname.split(".")[0]
        if fullname in ("megatron", "megatron.bridge"):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        if fullname.startswith(REAL_PREFIXES):
            return None
        if top in sys.stdlib_module_names or top == "__future__":
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        if spec.name in ("megatron", "megatron.bridge"):
            m = types.ModuleType(spec.name)
            m.__path__ = [os.path.join(SRC, *spec.name.split("."))]
            return m
        m = StubModule(spec.name)
        if spec.name in PATH_PACKAGES:
            m.__path__ = [os.path.join(SRC, *spec.name.split("."))]
        return m

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, Finder())
sys.path.insert(0, SRC)

NAME = re.compile(r"^[a-z0-9_]+?_(\d+)gpu_(h100|b200|b300|gb200|gb300|vr200|r100|a100|h200|l40s)_([a-z0-9_]+)$")


def plain(v, depth=0):
    """JSON-friendly view of a recorded value."""
    if depth > 4:
        return None
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [plain(x, depth + 1) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x, depth + 1) for k, x in v.items()}
    if isinstance(v, type) and isinstance(v, StubMeta):
        return "stub:" + v._stub_name
    if isinstance(v, Bag):
        d = {k: plain(x, depth + 1) for k, x in v._d.items() if not isinstance(x, Unknown) or isinstance(x, Bag)}
        d["__class__"] = type(v)._stub_name
        return d
    if isinstance(v, Unknown):
        return None
    if hasattr(v, "name"):
        return str(getattr(v, "name"))
    return str(v)


def origin_strings(u):
    """String arguments along the call chain that produced a stub value (hf ids, provider names)."""
    out = []
    seen = 0
    while isinstance(u, Unknown) and seen < 20:
        seen += 1
        o = object.__getattribute__(u, "_origin")
        if o is None:
            break
        if o[0] in ("call", "new"):
            out.append(o[1])
            out += [a for a in (o[2] or ()) if isinstance(a, str)]
            break
        parent, k, args = o
        out += [a for a in (args or ()) if isinstance(a, str)]
        u = parent
    return out


def section(cfg, name):
    s = getattr(cfg, name, None)
    if isinstance(s, Unknown):
        d = {k: plain(v) for k, v in object.__getattribute__(s, "_d").items()}
        if isinstance(s, Bag):
            d["__class__"] = type(s)._stub_name
        return d
    return plain(s)


def main():
    results = []
    errors = []
    mp = importlib.import_module("megatron.bridge.training.mixed_precision")
    for root_pkg in ("recipes", "perf_recipes"):
        base = os.path.join(SRC, "megatron", "bridge", root_pkg)
        for dirpath, _, files in sorted(os.walk(base)):
            for f in sorted(files):
                if not f.endswith(".py") or f == "__init__.py":
                    continue
                mod = os.path.relpath(os.path.join(dirpath, f), SRC)[:-3].replace(os.sep, ".")
                try:
                    m = importlib.import_module(mod)
                except Exception as e:  # noqa: BLE001
                    errors.append({"module": mod, "error": repr(e)})
                    continue
                for fname, fn in sorted(vars(m).items()):
                    if not isinstance(fn, types.FunctionType) or fn.__module__ != mod or fname.startswith("_"):
                        continue
                    mm = NAME.match(fname)
                    if not mm:
                        continue
                    try:
                        cfg = fn()
                    except Exception as e:  # noqa: BLE001
                        errors.append({"module": mod, "recipe": fname, "error": repr(e)})
                        continue
                    model = getattr(cfg, "model", None)
                    rec = {
                        "recipe": fname,
                        "module": mod,
                        "kind": "benchmark" if root_pkg == "perf_recipes" else "library",
                        "gpus": int(mm.group(1)),
                        "hw": mm.group(2),
                        "model_origin": origin_strings(model) + ([type(model)._stub_name] if isinstance(model, Bag) else []),
                    }
                    for sec in ("model", "train", "ddp", "optimizer", "dataset", "peft", "comm_overlap", "tokenizer"):
                        rec[sec] = section(cfg, sec)
                    prec = getattr(cfg, "mixed_precision", None)
                    if isinstance(prec, str):
                        prec = mp.get_mixed_precision_config(prec)
                    if isinstance(prec, mp.MixedPrecisionConfig):
                        prec.finalize = lambda: None
                        rec["mixed_precision"] = {k: plain(v) for k, v in vars(prec).items()}
                    else:
                        rec["mixed_precision"] = plain(prec)
                    results.append(rec)
    json.dump({"recipes": results, "errors": errors}, sys.stdout, indent=1, sort_keys=True, default=str)


if __name__ == "__main__":
    main()
