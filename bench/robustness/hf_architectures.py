"""Hugging Face folders of many architectures, opened and asked every query a view can ask.

A researcher opens "any local Hugging Face checkpoint": this builds a tiny random checkpoint of each
architecture below (the classes and settings transformers itself ships; weights random, so only what the app
does with them is measured, not what they predict), saves it with a tokenizer as a folder, opens it with
``api.load`` and runs each query: fill-mask, next token, generation, attention, contextual vectors, the logit
lens, the lens grid, causal tracing, attribution, the heads knocked out (and their and the MLP neurons' direct effects on the logits), what makes a neuron fire and the neurons for a word, a
sentence's score, classification, tagging and question answering. A
query ends in one of three ways: it answers ("ok"), it is refused with a message (a ``Word2BertError``:
"refused"), or it raises anything else ("CRASH", a defect). The table says which for every cell; the run
exits 1 when any cell crashed.

    python bench/robustness/hf_architectures.py [--only NAME,NAME] [--no-write]

An architecture this transformers does not have is listed as "not in transformers X".
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402

TEXTS = ["the cat sat on the mat", "a cat is sitting on a mat", "the bank of the river was muddy",
         "she put the money in the bank", "they played a match in the park"]

# name -> (transformers class, its config class, config settings, tokenizer: wordpiece | bpe | spm)
SMALL = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64}
ARCHITECTURES: dict[str, tuple[str, str, dict[str, Any], str]] = {
    "BERT masked LM": ("BertForMaskedLM", "BertConfig", SMALL, "wordpiece"),
    "BERT pre-training (MLM + NSP)": ("BertForPreTraining", "BertConfig", SMALL, "wordpiece"),
    "BERT encoder alone": ("BertModel", "BertConfig", SMALL, "wordpiece"),
    "BERT decoder (LM head)": ("BertLMHeadModel", "BertConfig", {**SMALL, "is_decoder": True}, "wordpiece"),
    "DistilBERT masked LM": ("DistilBertForMaskedLM", "DistilBertConfig",
                             {"dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 64}, "wordpiece"),
    "ALBERT masked LM": ("AlbertForMaskedLM", "AlbertConfig", {**SMALL, "embedding_size": 16}, "wordpiece"),
    "ELECTRA generator": ("ElectraForMaskedLM", "ElectraConfig", {**SMALL, "embedding_size": 16}, "wordpiece"),
    "ELECTRA discriminator": ("ElectraForPreTraining", "ElectraConfig", {**SMALL, "embedding_size": 16},
                              "wordpiece"),
    "DeBERTa-v2 masked LM": ("DebertaV2ForMaskedLM", "DebertaV2Config", SMALL, "wordpiece"),
    "DeBERTa-v3 masked LM (its own head)": ("DebertaV2ForMaskedLM", "DebertaV2Config", {**SMALL, "legacy": False},
                                            "wordpiece"),
    "MPNet masked LM": ("MPNetForMaskedLM", "MPNetConfig", SMALL, "wordpiece"),
    "ModernBERT masked LM": ("ModernBertForMaskedLM", "ModernBertConfig", SMALL, "wordpiece"),
    "MobileBERT pre-training": ("MobileBertForPreTraining", "MobileBertConfig",
                                {**SMALL, "embedding_size": 16, "intra_bottleneck_size": 16,
                                 "true_hidden_size": 16}, "wordpiece"),
    "RoBERTa masked LM": ("RobertaForMaskedLM", "RobertaConfig",
                          {**SMALL, "max_position_embeddings": 130, "pad_token_id": 1, "bos_token_id": 0,
                           "eos_token_id": 2}, "bpe"),
    "GPT-2": ("GPT2LMHeadModel", "GPT2Config", {"n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 128},
              "bpe"),
    "GPT-Neo": ("GPTNeoForCausalLM", "GPTNeoConfig",
                {"hidden_size": 32, "num_layers": 2, "num_heads": 4, "attention_types": [[["global", "local"], 1]]},
                "bpe"),
    "GPT-J": ("GPTJForCausalLM", "GPTJConfig", {"n_embd": 32, "n_layer": 2, "n_head": 4, "rotary_dim": 4}, "bpe"),
    "GPT-NeoX": ("GPTNeoXForCausalLM", "GPTNeoXConfig", SMALL, "bpe"),
    "OPT": ("OPTForCausalLM", "OPTConfig", {**SMALL, "ffn_dim": 64, "word_embed_proj_dim": 32}, "bpe"),
    "BLOOM": ("BloomForCausalLM", "BloomConfig", {"hidden_size": 32, "n_layer": 2, "n_head": 4}, "bpe"),
    "Falcon": ("FalconForCausalLM", "FalconConfig",
               {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4}, "bpe"),
    "Llama": ("LlamaForCausalLM", "LlamaConfig", {**SMALL, "num_key_value_heads": 2}, "spm"),
    "Mistral": ("MistralForCausalLM", "MistralConfig", {**SMALL, "num_key_value_heads": 2}, "spm"),
    "Qwen2": ("Qwen2ForCausalLM", "Qwen2Config", {**SMALL, "num_key_value_heads": 2}, "bpe"),
    "Gemma": ("GemmaForCausalLM", "GemmaConfig", {**SMALL, "num_key_value_heads": 1, "head_dim": 8}, "spm"),
    "Gemma 2 (soft-capped logits)": ("Gemma2ForCausalLM", "Gemma2Config",
                                     {**SMALL, "num_key_value_heads": 1, "head_dim": 8}, "spm"),
    "Cohere (scaled logits)": ("CohereForCausalLM", "CohereConfig", {**SMALL, "num_key_value_heads": 1}, "bpe"),
    "Phi-2": ("PhiForCausalLM", "PhiConfig", SMALL, "bpe"),
    "Phi-3": ("Phi3ForCausalLM", "Phi3Config", {**SMALL, "pad_token_id": 0}, "spm"),
    "XLNet": ("XLNetLMHeadModel", "XLNetConfig", {"d_model": 32, "n_layer": 2, "n_head": 4, "d_inner": 64}, "spm"),
    "T5 (text to text)": ("T5ForConditionalGeneration", "T5Config",
                          {"d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2, "num_heads": 4,
                           "decoder_start_token_id": 0}, "spm"),
    "T5 encoder alone": ("T5EncoderModel", "T5Config",
                         {"d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2, "num_heads": 4}, "spm"),
    "BART (denoiser)": ("BartForConditionalGeneration", "BartConfig",
                        {"d_model": 32, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
                         "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64,
                         "max_position_embeddings": 64}, "bpe"),
    "Funnel Transformer": ("FunnelForPreTraining", "FunnelConfig",
                           {"d_model": 32, "n_head": 4, "d_head": 8, "d_inner": 64, "block_sizes": [1, 1]},
                           "wordpiece"),
    "BERT sentence classifier": ("BertForSequenceClassification", "BertConfig",
                                 {**SMALL, "num_labels": 3}, "wordpiece"),
    "BERT regression head": ("BertForSequenceClassification", "BertConfig", {**SMALL, "num_labels": 1},
                             "wordpiece"),
    "BERT tagger": ("BertForTokenClassification", "BertConfig", {**SMALL, "num_labels": 5}, "wordpiece"),
    "DistilBERT question answering": ("DistilBertForQuestionAnswering", "DistilBertConfig",
                                      {"dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 64}, "wordpiece"),
    "RoBERTa sentence classifier": ("RobertaForSequenceClassification", "RobertaConfig",
                                    {**SMALL, "max_position_embeddings": 130, "pad_token_id": 1, "num_labels": 2},
                                    "bpe"),
    "BART sentence classifier (MNLI)": ("BartForSequenceClassification", "BartConfig",
                                        {"d_model": 32, "encoder_layers": 2, "decoder_layers": 2,
                                         "encoder_attention_heads": 4, "decoder_attention_heads": 4,
                                         "encoder_ffn_dim": 64, "decoder_ffn_dim": 64,
                                         "max_position_embeddings": 64, "num_labels": 3}, "bpe"),
    "T5 sentence classifier": ("T5ForSequenceClassification", "T5Config",
                               {"d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2, "num_heads": 4,
                                "num_labels": 2}, "spm"),
}

def api_word_neurons(handle: Any, layer: int, word: str) -> Any:
    from engine.api import word_neurons

    return word_neurons(handle, layer, word)


QUERIES: dict[str, Callable[[Any], Any]] = {
    "fill-mask": lambda h: h.fill_mask("the cat sat on the [MASK].", k=5),
    "next token": lambda h: h.next_token("the cat sat on the", k=5),
    "generate": lambda h: h.generate("the cat", tokens=4),
    "attention": lambda h: h.attention("the cat sat on the mat."),
    "vectors": lambda h: h.contextual_vectors("the cat sat on the mat."),
    "logit lens": lambda h: h.logit_lens("the cat sat on the [MASK]."),
    "lens grid": lambda h: h.lens_grid("the cat sat on the mat."),
    "tracing": lambda h: h.causal_trace("the cat sat on the [MASK].", "cat", samples=1),
    "attribution": lambda h: h.token_attribution("the cat sat on the [MASK]."),
    "heads": lambda h: h.head_ablation("the cat sat on the [MASK]."),
    "head by token": lambda h: h.head_positions("the cat sat on the [MASK].", 0, 0),
    "heads, corpus means": lambda h: h.head_ablation("the cat sat on the [MASK].", None, None, "corpus"),
    "direct effects": lambda h: h.direct_effects("the cat sat on the [MASK]."),
    "MLP neurons": lambda h: h.mlp_neurons("the cat sat on the [MASK].", 1),
    "neuron examples": lambda h: h.neuron_examples(1, 3, k=2),
    "word's neurons": lambda h: api_word_neurons(h, 1, "cat"),
    "score": lambda h: h.score("the cat sat on the mat."),
    "classify": lambda h: h.classify("the cat sat.", "a cat is sitting."),
    "tag": lambda h: h.tag("the cat sat in Paris."),
    "answer": lambda h: h.answer("where did the cat sit?", "the cat sat on the mat."),
}


def tokenizer(kind: str) -> Any:
    """A tokenizer of each family, learned from a few sentences (nothing installed beyond transformers and
    tokenizers, so that the GPU check runs it too): a WordPiece with [CLS] … [SEP] (BERT), a byte-level BPE with
    <s> … </s> (RoBERTa, GPT-2, BART) or a SentencePiece BPE ending each text with </s> (T5, Llama)."""
    import transformers
    from tokenizers import BertWordPieceTokenizer, ByteLevelBPETokenizer, SentencePieceBPETokenizer
    from tokenizers.processors import BertProcessing, RobertaProcessing, TemplateProcessing

    texts = TEXTS * 20
    if kind == "wordpiece":
        wordpiece = BertWordPieceTokenizer(lowercase=True)
        wordpiece.train_from_iterator(texts, vocab_size=300,
                                      special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
        wordpiece._tokenizer.post_processor = BertProcessing(("[SEP]", 3), ("[CLS]", 2))
        return transformers.PreTrainedTokenizerFast(tokenizer_object=wordpiece._tokenizer, unk_token="[UNK]",
                                                    cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]",
                                                    mask_token="[MASK]")
    if kind == "bpe":
        bpe = ByteLevelBPETokenizer()
        bpe.train_from_iterator(texts, vocab_size=400, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
        bpe._tokenizer.post_processor = RobertaProcessing(("</s>", 2), ("<s>", 0))
        return transformers.PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, bos_token="<s>",
                                                    eos_token="</s>", cls_token="<s>", sep_token="</s>",
                                                    unk_token="<unk>", pad_token="<pad>", mask_token="<mask>")
    spm = SentencePieceBPETokenizer()
    spm.train_from_iterator(texts, vocab_size=300, special_tokens=["<pad>", "</s>", "<unk>", "<extra_id_0>"])
    spm._tokenizer.post_processor = TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                       special_tokens=[("</s>", 1)])
    return transformers.PreTrainedTokenizerFast(tokenizer_object=spm._tokenizer, eos_token="</s>",
                                                unk_token="<unk>", pad_token="<pad>",
                                                additional_special_tokens=["<extra_id_0>"])  # (T5's first sentinel)


def probe(name: str, folder: Path, tokenizers: dict[str, Any]) -> dict[str, str]:
    """The cells of one architecture's row: "opens" (the capabilities, or why it does not) and each query's
    "ok", "refused: …" or "CRASH: …"."""
    import torch
    import transformers

    from engine import api

    cls_name, config_name, settings, kind = ARCHITECTURES[name]
    cls, config_cls = getattr(transformers, cls_name, None), getattr(transformers, config_name, None)
    if cls is None or config_cls is None:
        return {"opens": f"not in transformers {transformers.__version__}"}
    tok = tokenizers.setdefault(kind, tokenizer(kind))
    ids = {f"{k}_token_id": getattr(tok, f"{k}_token_id", None) for k in ("pad", "bos", "eos", "cls", "sep")}
    ids["bos_token_id"] = ids["bos_token_id"] if ids["bos_token_id"] is not None else ids["cls_token_id"]
    ids["eos_token_id"] = ids["eos_token_id"] if ids["eos_token_id"] is not None else ids["sep_token_id"]
    torch.manual_seed(0)
    config = config_cls(vocab_size=len(tok), **{**{k: v for k, v in ids.items() if v is not None}, **settings})
    cls(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    try:
        handle = api.load(folder)
    except api.Word2BertError as e:
        return {"opens": f"refused: {e}"}
    except Exception as e:  # noqa: BLE001 - a crash is what this bench counts
        return {"opens": f"CRASH: {type(e).__name__}: {e}"}
    row = {"opens": ", ".join(sorted((c.name or "").lower().replace("_", " ") for c in handle.capabilities))}
    for query, ask in QUERIES.items():
        try:
            ask(handle)
            row[query] = "ok"
        except api.Word2BertError as e:
            row[query] = f"refused: {e}"
        except Exception as e:  # noqa: BLE001
            row[query] = f"CRASH: {type(e).__name__}: {e}"
    return row


def run(names: list[str]) -> dict[str, dict[str, str]]:
    root = Path(tempfile.mkdtemp(prefix="hf-architectures-"))
    tokenizers: dict[str, Any] = {}
    rows = {}
    try:
        for name in names:
            slug = "-".join("".join(c if c.isalnum() else " " for c in name.lower()).split())
            rows[name] = {k: v.replace(f"{root}/", "") for k, v in probe(name, root / slug, tokenizers).items()}
            crashes = [q for q, cell in rows[name].items() if cell.startswith("CRASH")]
            print(f"{name}: {'CRASH in ' + ', '.join(crashes) if crashes else 'no crash'}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return rows


def mark(cell: str | None) -> str:
    if cell is None:
        return ""
    return {"ok": "✓"}.get(cell, "✗" if cell.startswith("CRASH") else "–")


def report(rows: dict[str, dict[str, str]], seconds: float, command: str) -> str:
    import transformers

    crashes = [(name, q, cell) for name, row in rows.items() for q, cell in row.items() if cell.startswith("CRASH")]
    answered = sum(cell == "ok" for row in rows.values() for q, cell in row.items() if q != "opens")
    refused = sum(cell.startswith("refused") for row in rows.values() for q, cell in row.items() if q != "opens")
    lines = ["## Hugging Face folders of many architectures, every query", "",
             f"`{command}` ({seconds:.0f} s). Machine: {machine()}; transformers {transformers.__version__}.", "",
             f"{len(rows)} architectures (tiny random checkpoints saved as folders, opened with `api.load`), "
             f"{len(QUERIES)} queries each: **{answered} answered, {refused} refused with a message, "
             f"{len(crashes)} crashed**. ✓ answered, – refused with a message (a `Word2BertError`), ✗ crashed.", "",
             "| architecture | opens with | " + " | ".join(QUERIES) + " |",
             "|---|---|" + "---|" * len(QUERIES)]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['opens']} | " + " | ".join(mark(row.get(q)) for q in QUERIES) + " |")
    lines += ["", "What the refusals say (an architecture that predicts no words: why; one that does: why the lab "
                  "does not read it):", ""]
    for name, row in rows.items():
        if row["opens"].startswith(("refused", "not in")):
            lines.append(f"- {name}: {row['opens'][:240]}")
            continue
        words = [row.get(q, "") for q in ("fill-mask", "next token")]
        asked = [q for q in ("fill-mask",) if all(w.startswith("refused") for w in words)]
        asked += [q for q in ("logit lens", "lens grid", "tracing", "attribution") if not asked and row.get(q, "").startswith("refused")
                  and "[MASK]" not in row[q]]
        for why in dict.fromkeys(row[q].removeprefix("refused: ")[:240] for q in asked):
            lines.append(f"- {name}: {why}")
        if row.get("heads") == "ok" and row.get("direct effects", "").startswith("refused"):
            lines.append(f"- {name}, direct effects: {row['direct effects'].removeprefix('refused: ')[:200]}")
    if crashes:
        lines += ["", "Crashes:", ""] + [f"- {name}, {q}: {cell[:300]}" for name, q, cell in crashes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="", help="comma-separated architecture names (default: all)")
    p.add_argument("--no-write", action="store_true", help="print the table; leave RESULTS.md alone")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(ARCHITECTURES)
    unknown = [n for n in names if n not in ARCHITECTURES]
    if unknown:
        p.error(f"unknown architecture {unknown[0]!r}; the names: {', '.join(ARCHITECTURES)}")
    start = time.perf_counter()
    rows = run(names)
    command = "python bench/robustness/hf_architectures.py" + (f" --only '{args.only}'" if args.only else "")
    text = report(rows, time.perf_counter() - start, command)
    print(text)
    if not args.no_write:
        write_section("hf-architectures", text)
    cells = [cell for row in rows.values() for q, cell in row.items() if q != "opens"]
    crashed = sum(cell.startswith("CRASH") for row in rows.values() for cell in row.values())
    from engine.device import pick_device

    print(f"{len(rows)} architectures on {pick_device().type}: {sum(c == 'ok' for c in cells)} answered, "
          f"{sum(c.startswith('refused') for c in cells)} refused, {crashed} crashed")  # (the GPU check's last line)
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
