"""Training speed of our BERT vs transformers' BertForPreTraining, identical config and batches.

Both get the same [CLS] A [SEP] B [SEP] batches with BERT's 80/10/10 masking and NSP labels and the
same AdamW step; ours computes the MLM head only at the masked positions, transformers' at every
position (its standard path, with sdpa attention). Rounds alternate between the two so that any
background load hits both alike; the medians of the rounds are reported.

With ``--levers`` ours also runs with a fused AdamW and with ``torch.compile`` (+ fused AdamW), each
measured beside the others in the same rounds; on a GPU the bf16 matrix product's own rate is measured
too (8192² by 8192²), so that the model FLOPs read as a share of what this card does, not of a data
sheet. On CUDA two more: the compiled step with the masked rows taken by a boolean index (the step before
``engine.models.masked_rows``: a wait for the device a step and two compiled graphs), and compiled with CUDA
graphs (``mode="reduce-overhead"``, which the fixed rows make possible). A lever that fails is reported as
failed, with its reason, and the others go on.

    python bench/speed/bert_vs_transformers.py [--seq 128] [--batch 32] [--vocab 8000] [--rounds 5] [--steps 5] [--levers]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402

from bench._report import machine, write_section  # noqa: E402
from engine.config.settings import BertConfig, apply_preset  # noqa: E402
from engine.device import pick_device, precision_for  # noqa: E402
from engine.models import bert as bert_module  # noqa: E402
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
    bert_module.STATIC_ROWS = True  # (the default: a lever below sets it off for its own steps)
    return model(b["inputs"], b["segments"], None, b["labels"], b["is_next"])["loss"]


def ours_boolean_index_step(model: torch.nn.Module, b: dict[str, torch.Tensor]) -> torch.Tensor:
    """The masked rows taken by a boolean index, as before engine.models.masked_rows."""
    bert_module.STATIC_ROWS = False
    return model(b["inputs"], b["segments"], None, b["labels"], b["is_next"])["loss"]


def ours_graphed_step(model: torch.nn.Module, b: dict[str, torch.Tensor]) -> torch.Tensor:
    torch.compiler.cudagraph_mark_step_begin()  # (a new step: the last one's graph outputs may be reused)
    return ours_step(model, b)


def theirs_step(model: torch.nn.Module, b: dict[str, torch.Tensor]) -> torch.Tensor:
    out = model(input_ids=b["inputs"], token_type_ids=b["segments"], labels=b["labels"],
                next_sentence_label=1 - b["is_next"])
    return out.loss


def matmul_rate(device: torch.device) -> float:
    """The measured bf16 matrix-product rate of this GPU in FLOP/s (the median of 10 products)."""
    n = 8192
    a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    times = []
    for _ in range(10):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return 2 * n**3 / statistics.median(times)


def timed(model, step, batches, precision, device, fused: bool = False) -> float:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=fused or None)
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
    p.add_argument("--levers", action="store_true", help="also ours with fused AdamW and with torch.compile")
    p.add_argument("--section", default=None, help="the RESULTS.md section to write")
    args = p.parse_args()
    device = pick_device(args.device)
    precision = precision_for(device)
    cfg = apply_preset("bert", BertConfig(vocab_size=args.vocab, max_len=512, dropout=0.1), args.preset)
    cfg.vocab_size = args.vocab
    torch.manual_seed(0)
    ours = Bert(cfg).to(device)
    hf_cfg = transformers.BertConfig(vocab_size=cfg.vocab_size, hidden_size=cfg.hidden, num_hidden_layers=cfg.layers,
                                     num_attention_heads=cfg.heads, intermediate_size=cfg.intermediate,
                                     max_position_embeddings=cfg.max_len,
                                     attn_implementation="sdpa")  # type: ignore[call-arg]  # (a PretrainedConfig keyword)
    theirs = transformers.BertForPreTraining(hf_cfg).to(device)  # type: ignore[arg-type]  # (transformers' stubs)
    batches = make_batches(args.steps, args.batch, args.seq, cfg.vocab_size, device)
    runs = {"theirs": (theirs, theirs_step, False), "ours": (ours, ours_step, False)}
    if args.levers:
        fused = device.type == "cuda"
        runs["ours, fused AdamW"] = (ours, ours_step, fused)
        runs["ours, torch.compile + fused AdamW"] = (torch.compile(ours), ours_step, fused)
        if device.type == "cuda":  # (elsewhere the masked rows are taken by the boolean index anyway)
            runs["ours, torch.compile + fused AdamW, masked rows by boolean index"] = (
                torch.compile(ours), ours_boolean_index_step, fused)
            runs["ours, torch.compile with CUDA graphs + fused AdamW"] = (
                torch.compile(ours, mode="reduce-overhead"), ours_graphed_step, fused)
    failed: dict[str, str] = {}
    for name, (model, step, fused) in list(runs.items()):  # warm-up (and compile)
        try:
            timed(model, step, batches[:2], precision, device, fused)
        except Exception as e:  # a lever that cannot run here: said, and the others measured
            failed[name] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            del runs[name]
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, (model, step, fused) in runs.items():
            times[name].append(timed(model, step, batches, precision, device, fused))
    tokens = args.steps * args.batch * args.seq
    tps = {name: tokens / statistics.median(t) for name, t in times.items()}
    theirs_tps = tps["theirs"]
    params = sum(p.numel() for p in ours.parameters())
    masked = float((batches[0]["labels"] != IGNORE).float().mean())
    rate = matmul_rate(device) if device.type == "cuda" else float("nan")
    names = {"theirs": "transformers BertForPreTraining (sdpa)", "ours": "word2bert Bert (MLM head at masked positions only)"}
    lines = [f"## BERT-{args.preset} training speed: ours vs transformers ({device.type})", "",
             f"Machine: {machine()}", "",
             f"Config: {cfg.layers} layers, hidden {cfg.hidden}, {cfg.heads} heads, vocab {cfg.vocab_size:,}, "
             f"{params / 1e6:.1f}M parameters; seq {args.seq}, batch {args.batch}, MLM+NSP, AdamW; "
             f"{masked:.1%} of tokens masked; precision {precision.dtype or 'fp32'}; median of {args.rounds} "
             f"alternating rounds of {args.steps} steps.", "",
             "| implementation | tokens/s | ratio | model TFLOP/s | share of measured bf16 matmul |",
             "|---|---:|---:|---:|---:|"]
    for name, value in tps.items():
        flops = 6 * params * value
        lines.append(f"| {names.get(name, name)} | {value:,.0f} | {value / theirs_tps:.2f}× | {flops / 1e12:.1f} "
                     f"| {flops / rate:.0%} |" if rate == rate else
                     f"| {names.get(name, name)} | {value:,.0f} | {value / theirs_tps:.2f}× | {flops / 1e12:.2f} | – |")
    for name, why in failed.items():
        lines.append(f"| {name} | failed: {why} | – | – | – |")
    t_ours = times["ours"]
    if device.type == "cuda":
        flops = 6 * params * tokens / statistics.median(t_ours)
        lines += ["", f"Model FLOPs (6·N·tokens/s, embeddings included): ours {flops / 1e12:.1f} TFLOP/s; this "
                      f"card's measured bf16 matrix product (8192²·8192²): {rate / 1e12:.0f} TFLOP/s."]
    body = "\n".join(lines)
    print(body)
    write_section(args.section or f"bert-vs-transformers-{args.preset}-{device.type}", body)


if __name__ == "__main__":
    main()
