#!/usr/bin/env python3
"""THROWAWAY calibration helper (not part of kbq): turn the recipe settings
read by extract_cases.py into calib/cases.tsv, one row per recipe with the
architecture, layout and training fields the memory model takes.

Architecture rows come from ../shared/facts/models.tsv plus calib/arch-extra.tsv
(facts models.tsv keeps in its notes); a recipe's own model settings (layer
pattern, MTP depth, inline provider sizes) override them. GPU memory comes
from ../shared/facts/gpus.tsv.

Usage: python3 calib/make_cases.py recipes-raw.json > calib/cases.tsv
"""
import csv
import json
import re
import sys

FACTS = "/work/shared/facts"
HERE = sys.path[0]

COLUMNS = (
    "recipe kind hw gpus capacity_gib status model_key note "
    "layers hidden ffn heads kv_heads head_dim vocab tied mlp mla q_lora kv_lora qk_nope qk_rope v_head "
    "experts topk moe_ffn shared_ffn latent attn gdn mamba mlp_layers moe_layers first_dense "
    "mamba_heads mamba_head_dim mamba_groups mamba_state conv_kernel gdn_kh gdn_vh gdn_kd gdn_vd "
    "mtp mtp_shared extra_params total_params active_params "
    "tp pp vp cp ep etp sp first_layers last_layers "
    "mode freeze_lm precision lp_params optimizer main_dtype exp_avg_dtype exp_avg_sq_dtype dist_opt fsdp grad_fp32 "
    "seq mbs gbs recompute recompute_method recompute_layers recompute_modules offload_modules offload_layers lora_rank lora_targets lora_per_expert te_ce"
).split()

# Recipe-name prefixes whose model is not found by Hugging Face id.
ALIASES = {
    "qwen35_text_35b_a3b": "qwen35_35b_a3b",
    "qwen35_text_9b": "qwen35_9b",
    "exaone45_vl_33b": "exaone45_33b",
    "exaone_moe_236b_a23b": "k_exaone_236b_a23b",
    "exaone_moe_2_0_750b_a37": "k_exaone2_750b_a37b",
    "step35_196b_a11b": "step35_flash",
    "step37": "step37_flash",
    "kimi_k25_vl": "kimi_k25",
    "glm_45v": "glm45v_106b",
    "gemma4_vl_26b": "gemma4_26b_a4b",
    "nemotron_nano_v2_vl_12b": "nemotron_nano_12b_v2_vl",
    "nemotron_omni_cord_v2": "nemotron_3_nano_omni",
    "nemotron_omni_cord_v2_long_context": "nemotron_3_nano_omni",
    "nemotron_omni_valor32k": "nemotron_3_nano_omni",
    "deepseek_v4_flash_no_mtp": "deepseek_v4_flash",
    "olmoe_7b": "olmoe_7b",
}

# Recipes the memory model cannot size, with the reason.
SKIP_PREFIX = {
    "flux_12b": "diffusion model (FLUX) not in models.tsv",
    "wan_14b": "diffusion model (Wan) not in models.tsv",
    "wan_1_3b": "diffusion model (Wan) not in models.tsv",
    "wan_1_3b_text2image": "diffusion model (Wan) not in models.tsv",
    "wan_1_3b_text2video": "diffusion model (Wan) not in models.tsv",
    "vanilla_gpt": "GPTModelProvider with library defaults only (no sizes in the recipe)",
    "glm51": "GLM-5.1 not in models.tsv",
    "qwen3_omni_30b_a3b": "Qwen3-Omni not in models.tsv",
}


def read_tsv(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def num(v, default=0):
    try:
        return int(v)
    except (TypeError, ValueError):
        try:
            return float(v)
        except (TypeError, ValueError):
            return default


def prefix_of(recipe):
    return re.sub(r"_(pretrain|sft|peft)_.*", "", recipe)


def expand_layout(layout):
    """Megatron pipeline layout (string or list of lists) -> list of virtual stages (lists of tokens)."""
    if isinstance(layout, list):
        return [[{"embedding": "E", "decoder": "t", "mtp": "m", "loss": "L"}.get(x, x) for x in st] for st in layout]
    s = layout.replace(",", "").replace(" ", "")
    group = re.compile(r"\(([^()]*)\)\*(\d+)")
    while group.search(s):
        s = group.sub(lambda m: m.group(1) * int(m.group(2)), s)
    s = re.sub(r"([A-Za-z])\*(\d+)", lambda m: m.group(1) * int(m.group(2)), s)
    return [list(st) for st in s.split("|")]


def stage_layers(model, layers, pp, vp):
    """Decoder layers on the first and last pipeline ranks (0 = even split)."""
    if pp <= 1:
        return 0, 0
    layout = model.get("pipeline_model_parallel_layout")
    if layout:
        stages = expand_layout(layout)
        per_rank = [0] * pp
        for i, st in enumerate(stages):
            per_rank[i % pp] += sum(1 for t in st if t == "t")
        return per_rank[0], per_rank[-1]
    first = num(model.get("num_layers_in_first_pipeline_stage"))
    last = num(model.get("num_layers_in_last_pipeline_stage"))
    if first or last:
        return first, last
    emb = bool(model.get("account_for_embedding_in_pipeline_split"))
    loss = bool(model.get("account_for_loss_in_pipeline_split"))
    if emb or loss:
        per = (layers + emb + loss) // pp
        return per - emb, per - loss
    return 0, 0


def dtype(v):
    v = str(v or "")
    if "bfloat16" in v:
        return "bf16"
    if "float16" in v:
        return "fp16"
    if "float8" in v:
        return "fp8"
    return "fp32"


def main():
    raw = json.load(open(sys.argv[1]))["recipes"]
    models = {r["model_key"]: r for r in read_tsv(f"{FACTS}/models.tsv")}
    by_hf = {r["hf_id"].lower(): k for k, r in models.items() if r["hf_id"]}
    gpus = {r["gpu_key"]: r for r in read_tsv(f"{FACTS}/gpus.tsv")}
    extra = {}
    for r in read_tsv(f"{HERE}/arch-extra.tsv"):
        extra.setdefault(r["model_key"], {})[r["field"]] = r["value"]

    print("# THROWAWAY calibration cases (calib/make_cases.py from the Megatron Bridge snapshot 067f987df);")
    print("# one row per recipe whose name carries a GPU count and hardware. Lists are comma-separated, '-' = empty.")
    print("\t".join(COLUMNS))
    for r in sorted(raw, key=lambda x: (x["kind"], x["recipe"])):
        m = r["model"] or {}
        row = {c: "" for c in COLUMNS}
        row.update(recipe=r["recipe"], kind=r["kind"], hw=r["hw"], gpus=r["gpus"], status="ok")
        notes = []
        hwrow = gpus.get(r["hw"])
        cap = hwrow and hwrow["memory_gb"]
        if not cap and r["hw"] == "r100":
            cap = gpus["vr200"]["memory_gb"]
            notes.append("r100 memory not in gpus.tsv: vr200's 288 GB assumed")
        row["capacity_gib"] = cap
        pre = prefix_of(r["recipe"])
        key = None
        for o in r["model_origin"]:
            if o.lower() in by_hf:
                key = by_hf[o.lower()]
        key = key or ALIASES.get(pre) or (pre if pre in models else None)
        inline = "HybridModelProvider" in " ".join(r["model_origin"]) or "GPTModelProvider" in " ".join(r["model_origin"])
        if pre in SKIP_PREFIX:
            row.update(status="skip", note=SKIP_PREFIX[pre])
            print("\t".join(str(row[c]) for c in COLUMNS))
            continue
        f = models.get(key, {}) if key else {}
        ex = extra.get(key or pre, {})
        if key is None and not inline:
            row.update(status="skip", note="model not in models.tsv")
            print("\t".join(str(row[c]) for c in COLUMNS))
            continue
        row["model_key"] = key or "-"

        # --- architecture: facts, then arch-extra, then the recipe's own model settings
        a = {}
        a["layers"] = num(m.get("num_layers")) or num(f.get("num_layers"))
        a["hidden"] = num(m.get("hidden_size")) or num(f.get("hidden_size"))
        a["heads"] = num(m.get("num_attention_heads")) or num(f.get("num_attention_heads"))
        kvh = str(f.get("num_key_value_heads", ""))
        a["kv_heads"] = num(m.get("num_query_groups")) or (num(kvh.split(":")[-1]) if kvh else 0) or a["heads"]
        hd = str(f.get("head_dim", ""))
        a["head_dim"] = num(m.get("kv_channels")) or (num(hd) if hd.isdigit() else 0) or (a["hidden"] // max(1, a["heads"]))
        a["vocab"] = num(f.get("vocab_size")) or num(ex.get("vocab"))
        tok = r.get("tokenizer") or {}
        if tok.get("use_tokenizer_vocab_size") is True and num(tok.get("vocab_size")):
            a["vocab"] = num(tok["vocab_size"])
        if inline:
            a["vocab"] = num(m.get("vocab_size")) or num(tok.get("vocab_size")) or a["vocab"]
        a["tied"] = int(ex.get("tied", "0"))
        a["mlp"] = ex.get("mlp", "gated")
        if inline and m.get("gated_linear_unit") is False or "squared_relu" in str(m.get("activation_func")):
            a["mlp"] = "plain"
        if inline and "GPTModelProvider" in " ".join(r["model_origin"]):
            a["mlp"] = "plain"  # GPT-3: GeLU MLP
        a["mla"] = 0
        for k in ("q_lora", "kv_lora", "qk_nope", "qk_rope", "v_head"):
            a[k] = 0
        if "mla" in ex:
            a["mla"] = 1
            a["q_lora"], a["kv_lora"], a["qk_nope"], a["qk_rope"], a["v_head"] = (int(x) for x in ex["mla"].split(":"))
        a["experts"] = num(m.get("num_moe_experts")) or num(f.get("num_experts"))
        a["topk"] = num(m.get("moe_router_topk")) or num(f.get("experts_per_token"))
        a["moe_ffn"] = num(m.get("moe_ffn_hidden_size")) or num(f.get("moe_ffn_hidden_size"))
        a["shared_ffn"] = num(m.get("moe_shared_expert_intermediate_size")) or num(ex.get("shared_ffn"))
        a["latent"] = num(ex.get("latent"))
        a["ffn"] = num(m.get("ffn_hidden_size")) or num(f.get("ffn_hidden_size"))
        a["first_dense"] = num(ex.get("first_dense"))
        freq = m.get("moe_layer_freq")
        pattern = m.get("hybrid_layer_pattern") or m.get("hybrid_override_pattern")
        for k in ("attn", "gdn", "mamba", "mlp_layers", "moe_layers"):
            a[k] = 0
        if pattern:
            pattern = pattern.split("/")[0]
            a["layers"] = len(pattern)
            a["attn"], a["mamba"], a["mlp_layers"], a["moe_layers"] = (pattern.count(c) for c in "*M-E")
        elif "hybrid" in ex:
            counts = dict(kv.split("=") for kv in ex["hybrid"].split(","))
            a["attn"], a["gdn"], a["mamba"] = (int(counts.get(c, 0)) for c in ("attn", "gdn", "mamba"))
            a["mlp_layers"], a["moe_layers"] = int(counts.get("mlp", 0)), int(counts.get("moe", 0))
        else:
            a["attn"] = a["layers"]
            if isinstance(freq, list) and len(freq) == a["layers"]:
                a["moe_layers"] = sum(freq)
                a["first_dense"] = next((i for i, x in enumerate(freq) if x), 0)
            elif a["experts"]:
                a["moe_layers"] = a["layers"] - a["first_dense"]
            a["mlp_layers"] = a["layers"] - a["moe_layers"]
        if a["experts"] == 0:
            a["moe_layers"] = 0
        mamba = ex.get("mamba")
        a["mamba_heads"], a["mamba_head_dim"], a["mamba_groups"], a["mamba_state"] = (
            (int(x) for x in mamba.split(":")) if mamba else (0, 0, 0, 0))
        for k, mk in (("mamba_heads", "mamba_num_heads"), ("mamba_head_dim", "mamba_head_dim"),
                      ("mamba_groups", "mamba_num_groups"), ("mamba_state", "mamba_state_dim")):
            a[k] = num(m.get(mk)) or a[k]
        a["conv_kernel"] = num(ex.get("conv_kernel")) or (4 if a["mamba"] else 0)
        gdn = ex.get("gdn")
        a["gdn_kh"], a["gdn_vh"], a["gdn_kd"], a["gdn_vd"] = (int(x) for x in gdn.split(":")) if gdn else (0, 0, 0, 0)
        mtp = m.get("mtp_num_layers")
        a["mtp"] = mtp if isinstance(mtp, int) else num(ex.get("mtp"))
        a["mtp_shared"] = 1 if m.get("mtp_use_repeated_layer") is True else 0
        a["extra_params"] = num(ex.get("extra_b")) * 1e9
        a["total_params"] = num(f.get("total_params_b")) * 1e9
        a["active_params"] = num(f.get("active_params_b")) * 1e9
        if "approx" in ex:
            notes.append("approximated: " + ex["approx"])
        if key == "deepseek_v4_flash" or key == "deepseek_v4_pro":
            a["kv_heads"] = 1
        row.update(a)
        if not a["layers"] or not a["hidden"] or not a["vocab"] or (a["experts"] and not a["moe_ffn"]):
            row.update(status="skip", note="architecture incomplete in models.tsv (" + (key or "inline") + ")")
            print("\t".join(str(row[c]) for c in COLUMNS))
            continue

        # --- layout
        tp = num(m.get("tensor_model_parallel_size"), 1) or 1
        pp = num(m.get("pipeline_model_parallel_size"), 1) or 1
        vp = num(m.get("virtual_pipeline_model_parallel_size"), 1) or 1
        cp = num(m.get("context_parallel_size"), 1) or 1
        ep = num(m.get("expert_model_parallel_size"), 1) or 1
        # Bridge (models/transformer_config.py _set_moe_expert_tensor_parallel_default): unset ETP is 1
        # when EP > 1; Megatron-Core resolves it to TP otherwise.
        etp = num(m.get("expert_tensor_parallel_size"), 0) or (1 if ep > 1 else tp)
        first, last = stage_layers(m, a["layers"], pp, vp)
        row.update(tp=tp, pp=pp, vp=vp, cp=cp, ep=ep, etp=etp, sp=1 if m.get("sequence_parallel") else 0,
                   first_layers=first, last_layers=last)

        # --- training
        peft = r.get("peft") or {}
        pcls = str(peft.get("__class__", ""))
        mode = "dora" if "DoRA" in pcls else ("lora" if "LoRA" in pcls else "full")
        mp = r.get("mixed_precision")
        mp = mp if isinstance(mp, dict) else {}
        if mp.get("fp4"):
            prec, lp = "nvfp4", bool(mp.get("fp4_param_gather") or mp.get("fp4_param"))
        elif mp.get("fp8"):
            prec = "mxfp8" if mp.get("fp8_recipe") == "mxfp8" else "fp8"
            lp = bool(mp.get("fp8_param_gather") or mp.get("fp8_param"))
        else:
            prec, lp = "bf16", False
        ddp, opt, train = r.get("ddp") or {}, r.get("optimizer") or {}, r.get("train") or {}
        grad_fp32 = mp.get("grad_reduce_in_fp32", ddp.get("grad_reduce_in_fp32", True))
        aware = opt.get("use_precision_aware_optimizer") is True
        ds = r.get("dataset") if isinstance(r.get("dataset"), dict) else {}
        seq = num(ds.get("seq_length")) or num(m.get("seq_length"))
        packed = (ds.get("offline_packing_specs") or {}) if isinstance(ds.get("offline_packing_specs"), dict) else {}
        seq = max(seq, num(packed.get("packed_sequence_size")))
        if not seq:
            row.update(status="skip", note="sequence length not found in the recipe")
            print("\t".join(str(row[c]) for c in COLUMNS))
            continue
        gran = m.get("recompute_granularity") or "none"
        mods = m.get("recompute_modules") if isinstance(m.get("recompute_modules"), list) else []
        known = {"core_attn", "attn_proj", "layernorm", "mla_up_proj", "mlp", "moe", "moe_act", "shared_experts", "expert_fc1"}
        unknown = [x for x in mods if x not in known]
        if unknown:
            notes.append("recompute modules not modelled: " + ",".join(unknown))
        if gran == "selective" and not mods and isinstance(m.get("recompute_modules"), list):
            mods = []  # explicit empty list: Megatron recomputes nothing
            gran = "none"
        offl = m.get("offload_modules") if m.get("fine_grained_activation_offloading") is True else []
        offl = offl or []
        unknown = [x for x in offl if x not in known]
        if unknown:
            notes.append("offload modules not modelled: " + ",".join(unknown))
        targets = peft.get("target_modules") or ["linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"]
        row.update(
            mode=mode, precision=prec, lp_params=int(lp),
            freeze_lm=int(m.get("freeze_language_model") is True and mode == "full"),
            optimizer="muon" if "muon" in str(opt.get("optimizer")) else "adam",
            main_dtype=dtype(opt.get("main_params_dtype")) if aware else "fp32",
            exp_avg_dtype=dtype(opt.get("exp_avg_dtype")) if aware else "fp32",
            exp_avg_sq_dtype=dtype(opt.get("exp_avg_sq_dtype")) if aware else "fp32",
            # dist_muon shards its state over data-parallel ranks like the distributed optimizer
            dist_opt=int(bool(ddp.get("use_distributed_optimizer") or opt.get("use_distributed_optimizer")
                              or opt.get("optimizer") == "dist_muon")),
            fsdp=int(ddp.get("use_megatron_fsdp") is True), grad_fp32=int(grad_fp32 is not False),
            seq=seq, mbs=num(train.get("micro_batch_size"), 1) or 1, gbs=num(train.get("global_batch_size"), 0),
            recompute=gran, recompute_method=m.get("recompute_method") or "uniform",
            recompute_layers=num(m.get("recompute_num_layers"), 1) or 1,
            recompute_modules=",".join(x for x in mods if x in known) or "-",
            offload_modules=",".join(x for x in offl if x in known) or "-",
            offload_layers=num(m.get("cpu_offloading_num_layers")) if m.get("cpu_offloading") is True
            and m.get("cpu_offloading_activations") is not False else 0,
            lora_rank=num(peft.get("dim"), 32) if mode != "full" else 0,
            lora_targets=",".join(t for t in targets if isinstance(t, str)) if mode != "full" else "-",
            lora_per_expert=int(peft.get("share_expert_adapters") is False),
            te_ce=int(m.get("cross_entropy_loss_fusion") is True and m.get("cross_entropy_fusion_impl") == "te"),
        )
        row["note"] = "; ".join(notes) or "-"
        print("\t".join(str(row[c]) for c in COLUMNS))


if __name__ == "__main__":
    main()
