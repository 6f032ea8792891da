"""Export run folders: our BERT / GPT as ``transformers`` folders (BertForPreTraining / GPT2LMHeadModel),
and any run folder as a slim copy with fp16 weights (the shipped default checkpoints)."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from engine.checkpoints.average import averaged_weights
from engine.checkpoints.files import CONFIG, WEIGHTS
from engine.checkpoints.reading import read_config, read_tensors
from engine.checkpoints.saves import save_run
from engine.errors import CheckpointError, Unsupported, Word2BertError
from engine.families import FAMILIES
from engine.models.hf_lock import one_thread_in_transformers


def _bert_keys(layers: int) -> dict[str, str]:
    """our name -> BertForPreTraining name"""
    m = {"token_emb.weight": "bert.embeddings.word_embeddings.weight",
         "position_emb.weight": "bert.embeddings.position_embeddings.weight",
         "segment_emb.weight": "bert.embeddings.token_type_embeddings.weight",
         "emb_norm.weight": "bert.embeddings.LayerNorm.weight", "emb_norm.bias": "bert.embeddings.LayerNorm.bias",
         "pooler.weight": "bert.pooler.dense.weight", "pooler.bias": "bert.pooler.dense.bias",
         "mlm_dense.weight": "cls.predictions.transform.dense.weight",
         "mlm_dense.bias": "cls.predictions.transform.dense.bias",
         "mlm_norm.weight": "cls.predictions.transform.LayerNorm.weight",
         "mlm_norm.bias": "cls.predictions.transform.LayerNorm.bias",
         "mlm_bias": "cls.predictions.bias",
         "nsp.weight": "cls.seq_relationship.weight", "nsp.bias": "cls.seq_relationship.bias"}
    parts = {"query": "attention.self.query", "key": "attention.self.key", "value": "attention.self.value",
             "attn_out": "attention.output.dense", "attn_norm": "attention.output.LayerNorm",
             "ffn_in": "intermediate.dense", "ffn_out": "output.dense", "ffn_norm": "output.LayerNorm"}
    for i in range(layers):
        for ours, theirs in parts.items():
            for p in ("weight", "bias"):
                m[f"layers.{i}.{ours}.{p}"] = f"bert.encoder.layer.{i}.{theirs}.{p}"
    return m


def _gpt_state(tensors: dict[str, torch.Tensor], layers: int) -> dict[str, torch.Tensor]:
    """Our GPT weights in GPT2LMHeadModel names (its Conv1D weights are (in, out): transposed)."""
    out = {"transformer.wte.weight": tensors["token_emb.weight"], "transformer.wpe.weight": tensors["position_emb.weight"],
           "transformer.ln_f.weight": tensors["final_norm.weight"], "transformer.ln_f.bias": tensors["final_norm.bias"],
           "lm_head.weight": tensors["token_emb.weight"]}
    names = {"norm1": "ln_1", "norm2": "ln_2", "qkv": "attn.c_attn", "attn_out": "attn.c_proj",
             "ffn_in": "mlp.c_fc", "ffn_out": "mlp.c_proj"}
    for i in range(layers):
        for ours, theirs in names.items():
            w = tensors[f"blocks.{i}.{ours}.weight"]
            out[f"transformer.h.{i}.{theirs}.weight"] = w if ours.startswith("norm") else w.T.contiguous()
            out[f"transformer.h.{i}.{theirs}.bias"] = tensors[f"blocks.{i}.{ours}.bias"]
    return out


@one_thread_in_transformers
def export_hf(run_dir: str | Path, out: str | Path) -> Path:
    """Write a run folder of a family that exports (BERT, GPT: ``Family.to_transformers``) as a Hugging
    Face folder that ``from_pretrained`` loads."""
    import transformers

    from engine.config.checks import config_from_dict
    from engine.data.text import load_subword_tokenizer
    transformers.utils.logging.disable_progress_bar()
    run_dir, out = Path(run_dir), Path(out)
    config = read_config(run_dir)
    kind = config["kind"]
    exporting = [k for k, f in FAMILIES.items() if f.to_transformers]
    if kind not in FAMILIES or not FAMILIES[kind].to_transformers:
        raise Unsupported(f"only {' and '.join(k.upper() for k in exporting)} runs export to transformers "
                          f"(this run is {kind})")
    cfg = config_from_dict(kind, config["model"])
    tensors = {k: v.float() for k, v in read_tensors(run_dir, config).items()}
    tok = load_subword_tokenizer(run_dir / config.get("tokenizer", "tokenizer.json"))
    model, state, fast = FAMILIES[kind].exporter()(cfg, tensors, tok)
    result = model.load_state_dict(state, strict=False)
    missing = [k for k in result.missing_keys if not k.endswith(("position_ids", "attn.bias", "masked_bias"))]
    if missing or result.unexpected_keys:
        raise CheckpointError(f"export mismatch: missing {missing}, unexpected {result.unexpected_keys}")
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    fast.save_pretrained(out)
    return out


def bert_to_transformers(cfg: Any, tensors: dict[str, torch.Tensor], tok: Any) -> tuple[Any, dict[str, Any], Any]:
    """Our BERT as transformers' BertForPreTraining: (model, its state dict, its tokenizer)."""
    import transformers

    hf_cfg = transformers.BertConfig(
        vocab_size=cfg.vocab_size, hidden_size=cfg.hidden, num_hidden_layers=cfg.layers,
        num_attention_heads=cfg.heads, intermediate_size=cfg.intermediate, hidden_act="gelu",
        max_position_embeddings=cfg.max_len, type_vocab_size=2, layer_norm_eps=1e-12,
        hidden_dropout_prob=cfg.dropout, attention_probs_dropout_prob=cfg.dropout,
        pad_token_id=tok.token_to_id("[PAD]"), architectures=["BertForPreTraining"])
    model = transformers.BertForPreTraining(hf_cfg)
    names = _bert_keys(cfg.layers)
    state = {names[k]: v for k, v in tensors.items()}
    state["cls.predictions.decoder.weight"] = tensors["token_emb.weight"]
    state["cls.predictions.decoder.bias"] = tensors["mlm_bias"]
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]",
        mask_token="[MASK]", do_lower_case=cfg.lowercase, model_max_length=cfg.max_len)
    return model, state, fast


def gpt_to_transformers(cfg: Any, tensors: dict[str, torch.Tensor], tok: Any) -> tuple[Any, dict[str, Any], Any]:
    """Our GPT as transformers' GPT2LMHeadModel: (model, its state dict, its tokenizer)."""
    import transformers

    from engine.data.inputs import separator

    byte_level = cfg.tokenizer == "bpe"
    special = separator(byte_level)
    sid = tok.token_to_id(special)
    hf_cfg = transformers.GPT2Config(
        vocab_size=cfg.vocab_size, n_positions=cfg.max_len, n_embd=cfg.hidden, n_layer=cfg.layers,
        n_head=cfg.heads, n_inner=cfg.intermediate, activation_function="gelu_new",
        resid_pdrop=cfg.dropout, embd_pdrop=cfg.dropout, attn_pdrop=cfg.dropout, layer_norm_epsilon=1e-5,
        bos_token_id=sid, eos_token_id=sid, architectures=["GPT2LMHeadModel"], tie_word_embeddings=True)
    model = transformers.GPT2LMHeadModel(hf_cfg)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=special, eos_token=special,
                                                unk_token=special, model_max_length=cfg.max_len)
    return model, _gpt_state(tensors, cfg.layers), fast


def export_slim(run_dir: str | Path, out: str | Path, fp16: bool = True,
                average_with: Sequence[str | Path] = ()) -> Path:
    """A copy of a run folder for shipping: weights (fp16), config, tokenizer/vocabulary and metrics;
    no optimizer state, no history and no path of this machine (a continued run's ``init_from_folder``). With ``average_with``: its weights are the uniform mean of the
    run's and those saves' (engine.checkpoints.average); config.json names them under ``averaged`` and
    drops the run's last ``metrics`` (they were measured on the run's own weights)."""
    run_dir, out = Path(run_dir), Path(out)
    config = read_config(run_dir)
    if average_with:
        tensors, sources = averaged_weights([run_dir, *average_with])
        config = {k: v for k, v in config.items() if k != "metrics"}
        config["averaged"] = sources
    else:
        tensors = read_tensors(run_dir, config)
    skip = {CONFIG, WEIGHTS, "training_state.pt", "training_state.json", "checkpoint_scores.json"}  # the scores name the run's history
    files = {p.name: (lambda dst, src=p: shutil.copyfile(src, dst)) for p in run_dir.iterdir()
             if p.is_file() and p.name not in skip and not p.name.startswith(".")}
    # where a continued run's source lay is a path on the exporting machine: a shipped copy does not carry it
    dropped = ("format_version", "kind", "engine_version", "save_id", "init_from_folder")
    kept = {k: v for k, v in config.items() if k not in dropped}
    declaration = FAMILIES.get(config["kind"])
    if declaration is not None and declaration.inference_weights is not None:  # what a slim copy answers with
        tensors = declaration.inference_weights(config, tensors)
        kept["weights"] = "inference"
    fp16 = fp16 and (declaration is None or declaration.slim_fp16)
    save_run(out, config["kind"], kept, tensors, files=files, dtype=torch.float16 if fp16 else None)
    return out


def export_main(argv: list[str] | None = None) -> int:
    from engine.data.keyed_vectors import save_word2vec_format
    from engine.handles.load import load

    p = argparse.ArgumentParser(prog="word2bert-export", description="Export a model to another format.")
    p.add_argument("run_dir")
    p.add_argument("--to", choices=["word2vec", "hf", "slim"], required=True,
                   help="word2vec: static vectors file; hf: a transformers folder (BERT, GPT); "
                        "slim: a run folder with fp16 weights and no training state (for shipping)")
    p.add_argument("out")
    p.add_argument("--binary", action="store_true", help="word2vec binary format (default: text)")
    p.add_argument("--average-with", nargs="+", default=[], metavar="SAVE",
                   help="with --to slim: ship the uniform mean of the run's weights and these saves' (the run's "
                        "kept checkpoints RUN/checkpoints/step-N, or, for an adapted encoder, runs of the same base)")
    args = p.parse_args(argv)
    if args.average_with and args.to != "slim":
        p.error("--average-with goes with --to slim")
    try:
        if args.to == "hf":
            export_hf(args.run_dir, args.out)
        elif args.to == "slim":
            export_slim(args.run_dir, args.out, average_with=args.average_with)
        else:
            handle = load(args.run_dir)
            save_word2vec_format(handle.static_vectors(), args.out, binary=args.binary)
    except Word2BertError as e:
        print(f"word2bert-export: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def main() -> None:
    """The console script ``word2bert-export``: export_main, then a quick exit (runner.exit_now)."""
    from engine.cli.runner import exit_now

    exit_now(export_main())


if __name__ == "__main__":
    main()
