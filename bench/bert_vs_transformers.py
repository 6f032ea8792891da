"""Training speed of our BERT vs transformers' BertForPreTraining, identical config and batches.

Both get the same [CLS] A [SEP] B [SEP] batches with BERT's 80/10/10 masking and NSP labels and the
same AdamW step; ours computes the MLM head only at the masked positions, transformers' at every
position (its standard path, with sdpa attention). Rounds alternate between the two so that any
background load hits both alike; the medians of the rounds are reported.

    python bench/bert_vs_transformers.py [--seq 128] [--batch 32] [--vocab 8000] [--rounds 5] [--steps 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from bench._report import machine, write_section  # noqa: E402
from engine.config import BertConfig, apply_preset  # noqa: E402
from engine.device import pick_device, precision_for  # noqa: E402
from engine.models.bert import IGNORE, Bert, mask_tokens  # noqa: E402


def make_batches(n: int, batch: int, seq: int, vocab: int, device: torch.device) -> list[dict[str, torch.Tensor]]:
    gen = torch.Generator(device=device).manual_seed(0)
    out = []
    for _ in range(n):
        ids = torch.randint(5, vocab, (batch, seq), device=device, generator=gen)
        ids[:, 0], ids[:, seq // 2], ids[:, -1] = 2, 3, 3
        segments = torch.zeros_like(ids)
        segments[:, seq // 2 + 1 :] = 1
        inputs, labels = mask_tokens(ids, ids < 5, mask_id=4, vocab_size=vocab, first_normal=5, generator=gen)
        out.append({"inputs": inputs, "segments": segments, "labels": labels,
                    "is_next": torch.randint(0, 2, (batch,), device=device, generator=gen)})
    return out


def ours_step(model: torch.nn.Module, b: dict[str, torch.Tensor]) -> torch.Tensor:
    return model(b["inputs"], b["segments"], None, b["labels"], b["is_next"])["loss"]


def theirs_step(model: torch.nn.Module, b: dict[str, torch.Tensor]) -> torch.Tensor:
    out = model(input_ids=b["inputs"], token_type_ids=b["segments"], labels=b["labels"],
                next_sentence_label=1 - b["is_next"])
    return out.loss


def timed(model, step, batches, precision, device) -> float:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()
    t0 = time.perf_counter()
    for b in batches:
        with precision.autocast():
            loss = step(model, b)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t0


def main() -> None:
    import transformers

    p = argparse.ArgumentParser()
    p.add_argument("--preset", default="tiny")
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--vocab", type=int, default=8000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--device", default=None)
    args = p.parse_args()
    device = pick_device(args.device)
    precision = precision_for(device)
    cfg = apply_preset("bert", BertConfig(vocab_size=args.vocab, max_len=512, dropout=0.1), args.preset)
    cfg.vocab_size = args.vocab
    torch.manual_seed(0)
    ours = Bert(cfg).to(device)
    hf_cfg = transformers.BertConfig(vocab_size=cfg.vocab_size, hidden_size=cfg.hidden, num_hidden_layers=cfg.layers,
                                     num_attention_heads=cfg.heads, intermediate_size=cfg.intermediate,
                                     max_position_embeddings=cfg.max_len, attn_implementation="sdpa")
    theirs = transformers.BertForPreTraining(hf_cfg).to(device)
    batches = make_batches(args.steps, args.batch, args.seq, cfg.vocab_size, device)
    timed(ours, ours_step, batches[:1], precision, device)  # warm-up
    timed(theirs, theirs_step, batches[:1], precision, device)
    t_ours, t_theirs = [], []
    for _ in range(args.rounds):
        t_ours.append(timed(ours, ours_step, batches, precision, device))
        t_theirs.append(timed(theirs, theirs_step, batches, precision, device))
    tokens = args.steps * args.batch * args.seq
    ours_tps, theirs_tps = tokens / statistics.median(t_ours), tokens / statistics.median(t_theirs)
    params = sum(p.numel() for p in ours.parameters())
    masked = float((batches[0]["labels"] != IGNORE).float().mean())
    lines = [f"## BERT-{args.preset} training speed: ours vs transformers ({device.type})", "",
             f"Machine: {machine()}", "",
             f"Config: {cfg.layers} layers, hidden {cfg.hidden}, {cfg.heads} heads, vocab {cfg.vocab_size:,}, "
             f"{params / 1e6:.1f}M parameters; seq {args.seq}, batch {args.batch}, MLM+NSP, AdamW; "
             f"{masked:.1%} of tokens masked; precision {precision.dtype or 'fp32'}; median of {args.rounds} "
             f"alternating rounds of {args.steps} steps.", "",
             "| implementation | tokens/s | ratio |", "|---|---:|---:|",
             f"| transformers BertForPreTraining (sdpa) | {theirs_tps:,.0f} | 1.00× |",
             f"| word2bert Bert (MLM head at masked positions only) | {ours_tps:,.0f} | {ours_tps / theirs_tps:.2f}× |"]
    if device.type == "cuda":
        flops = 6 * params * tokens / statistics.median(t_ours)
        peak = 989e12 if "H100" in torch.cuda.get_device_name() else float("nan")
        lines += ["", f"Model FLOPs (6·N·tokens/s, embeddings included): {flops / 1e12:.1f} TFLOP/s; MFU "
                      f"{flops / peak:.1%} of bf16 dense peak"]
    body = "\n".join(lines)
    print(body)
    write_section(f"bert-vs-transformers-{args.preset}-{device.type}", body)


if __name__ == "__main__":
    main()
