"""Hostile text at scale (issue 17): every query of every model family, fed hypothesis-generated text
(any Unicode, lone surrogates, NUL and control characters, [MASK]s, long runs) and any ``k`` a script
or scene could pass, N examples per query and model. Every call must answer or raise one of the
documented errors (``engine.api.Word2BertError``: InputError, UnknownWord, Unsupported, …); anything
else is a failure, listed with its first example. Slow calls (over 5 s) are counted too.

Models: the shipped defaults and built-ins (GloVe, word2vec, ELMo, GPT, BERT, all-MiniLM, the adapted
MiniLM) and, trained here in seconds on 200k words of the default corpus, a Kneser-Ney 3-gram and an
NNLM (so every family is covered).

    python bench/robustness/fuzz.py [--examples 10000] [--models bert-tiny,gpt-tiny]
    # split over two cores, then one table:
    python bench/robustness/fuzz.py --models A,B --save-rows a.json --no-write & python bench/robustness/fuzz.py --models C --save-rows c.json --no-write
    python bench/robustness/fuzz.py --models "" --merge a.json,c.json
    # finish what a stopped run did not reach: --models X --queries score,generate --save-rows x.json --no-write
    # more examples of a query: another --seed (rows of one query with different seeds add up when merged)
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402

DEFAULT_MODELS = ("glove-6b-50d,word2vec-sgns,ngram,nnlm,elmo-tiny,gpt-tiny,bert-tiny,all-minilm-l6-v2,minilm-mlm,"
                  "minilm-gpt")
SLOW_S = 5.0
UNSUPPORTED_EXAMPLES = 300  # calls of a query the model does not have (each must raise Unsupported)


def strategies():
    from hypothesis import strategies as st

    pieces = st.sampled_from(["[MASK]", "\ud800", "\udee6", "\udfff", "\x00", "\u200b", "\u202e", "bank", "the",
                              "Ÿ", "ﬁ", "e\u0301", "🙂", "\t", "\n", " ", "##", "[CLS]", "[SEP]", "<unk>", "</s>"])
    short = st.lists(st.one_of(st.characters(), pieces, st.text(max_size=12)), max_size=30).map("".join)
    long = st.builds(lambda word, n: (word + " ") * n, st.sampled_from(["bank", "the", "🙂", "a" * 40, "[MASK]"]),
                     st.integers(100, 800))
    words = st.lists(st.sampled_from(["bank", "play", "king", "river", "money", "The", "paris", "[MASK]", "stage",
                                      "deposited", ".", ","]), min_size=1, max_size=12).map(" ".join)
    text = st.one_of(*[short] * 60, *[words] * 39, long)  # one in a hundred a long run
    odd_k = st.one_of(st.integers(-5, 3000), st.none(), st.floats(allow_nan=True), st.sampled_from(["5", True]))
    k = st.one_of(st.integers(1, 50), st.integers(1, 50), st.integers(1, 50), odd_k)  # mostly a usable k
    return text, k


def queries(handle):
    """(name, call(text, other, k)) for every query the protocol has, and the layer similarity of the model
    against itself over the two texts."""
    from engine.api import layer_similarity, word_neurons

    return [
        ("vector", lambda t, o, k: handle.vector(t)),
        ("static_neighbours", lambda t, o, k: handle.static_neighbours(t, k)),
        ("static_neighbours seen", lambda t, o, k: handle.static_neighbours(t, 5, min_count=k)),  # k as the floor
        ("word_count", lambda t, o, k: handle.word_count(t)),
        ("analogy", lambda t, o, k: handle.analogy(t, o, "king", k)),
        ("contextual_vectors", lambda t, o, k: handle.contextual_vectors(t)),
        ("attention", lambda t, o, k: handle.attention((t, o) if o else t)),
        ("fill_mask", lambda t, o, k: handle.fill_mask(t, k)),
        ("next_token", lambda t, o, k: handle.next_token(t, k)),
        ("logit_lens", lambda t, o, k: handle.logit_lens(t, k)),
        ("lens_grid", lambda t, o, k: handle.lens_grid(t, k)),
        ("score", lambda t, o, k: handle.score(t)),
        ("next_sentence", lambda t, o, k: handle.next_sentence(t, o)),
        ("generate", lambda t, o, k: handle.generate(t, 3, no_repeat=k)),  # k as the run never repeated
        ("layer_similarity", lambda t, o, k: layer_similarity(handle, handle, [t, o])),
        ("causal_trace", lambda t, o, k: handle.causal_trace(t, o, 1)),  # the second text as the subject
        ("causal_trace contrast", lambda t, o, k: handle.causal_trace(t, "", 1, contrast=o)),
        ("token_attribution", lambda t, o, k: handle.token_attribution(t)),
        ("token_attribution target foil", lambda t, o, k: handle.token_attribution(t, o, t.split()[-1] if t.split()
                                                                                    else o)),
        ("head_ablation", lambda t, o, k: handle.head_ablation(t)),
        ("head_ablation target foil", lambda t, o, k: handle.head_ablation(t, o, t.split()[-1] if t.split() else o)),
        ("head_positions", lambda t, o, k: handle.head_positions(t, *_cell(k))),  # k as the layer and head
        ("head_ablation corpus", lambda t, o, k: handle.head_ablation(t, None, None, "corpus")),
        ("direct_effects", lambda t, o, k: handle.direct_effects(t)),
        ("direct_effects target foil", lambda t, o, k: handle.direct_effects(t, o, t.split()[-1] if t.split() else o)),
        ("head_ablation contrast", lambda t, o, k: handle.head_ablation(t, contrast=o)),  # the second text
        ("head_positions contrast", lambda t, o, k: handle.head_positions(t, *_cell(k), contrast=o)),
        ("mlp_neurons", lambda t, o, k: handle.mlp_neurons(t, _cell(k)[0])),  # k as the layer
        ("neuron_examples", lambda t, o, k: handle.neuron_examples(_cell(k)[0], k, k)),  # k as layer, neuron, count
        ("word_neurons", lambda t, o, k: word_neurons(handle, _cell(k)[0], t, k)),  # the text as the word
    ]


def _cell(k):
    """A (layer, head) from a hostile k: an int folded onto the usual sizes (some in range, some beyond), anything
    else passed on as it came."""
    return (k % 7, k % 13) if isinstance(k, int) and not isinstance(k, bool) else (k, k)


def trained_baselines(tmp: Path) -> dict[str, str]:
    from engine import api

    out = {}
    for kind, settings in (("ngram", {"order": 3, "smoothing": "kneser-ney"}), ("nnlm", {"epochs": 1})):
        folder = tmp / kind
        spec = api.RunSpec(kind, out=str(folder), corpus="default", max_words=200_000,
                           model=api.model_config(kind, **settings))
        for _ in api.train(spec):
            pass
        out[kind] = str(folder)
    return out


def make_run(stats: dict, call, text_st, k_st, examples: int, seed: int):
    """One query's property: every call answers or raises a documented error (counted, never raised)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    from engine import api

    @hseed(seed)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(text=text_st, other=text_st, k=k_st)
    def run(text, other, k):
        stats["calls"] += 1
        t0 = time.thread_time()  # this thread's CPU time: the machine's other work does not count
        try:
            call(text, other, k)
            stats["answered"] += 1
        except api.Word2BertError as e:
            if not str(e):
                stats["failures"]["empty message"] += 1
            stats["documented"][type(e).__name__] += 1
        except Exception as e:  # noqa: BLE001 - what this bench looks for
            key = f"{type(e).__name__}: {str(e)[:80]}"
            stats["failures"][key] += 1
            if not stats["first_failure"]:
                stats["first_failure"] = f"{key} on {text[:60]!r} (k={k!r})\n{traceback.format_exc(limit=3)}"
        spent = time.thread_time() - t0
        stats["max_s"] = max(stats["max_s"], spent)
        stats["slow"] += spent > SLOW_S

    return run


def fuzz(name: str, handle, examples: int, seed: int, only: set[str] | None = None) -> list[dict]:
    text_st, k_st = strategies()
    from engine import api

    rows = []
    for query, call in queries(handle):
        if only and query not in only:
            continue
        try:  # a query the model does not have at all: a few hundred calls show it refuses cleanly
            call("The bank [MASK] by the river .", "The bank raised its rates .", 5)
            n = examples
        except api.Unsupported:
            n = min(examples, UNSUPPORTED_EXAMPLES)
        except api.Word2BertError:
            n = examples
        stats = {"model": name, "query": query, "seed": seed, "calls": 0, "answered": 0, "documented": Counter(), "failures": Counter(),
                 "first_failure": "", "slow": 0, "max_s": 0.0}

        run = make_run(stats, call, text_st, k_st, n, seed)
        t0 = time.perf_counter()
        run()
        stats["seconds"] = time.perf_counter() - t0
        rows.append(stats)
        failures = sum(stats["failures"].values())
        print(f"{name:18s} {query:18s} {stats['calls']:6d} calls, {stats['answered']:6d} answered, "
              f"{failures} failures, {stats['slow']} slow, max {stats['max_s']:.2f} s, {stats['seconds']:.0f} s",
              flush=True)
        if stats["first_failure"]:
            print(stats["first_failure"], flush=True)
    return rows


def combined(rows: list[dict]) -> list[dict]:
    """One row per (model, query): runs with different seeds (different examples) add up; a query run twice
    with the same seed (the same examples, e.g. a stopped run finished later) counts once, its first run."""
    first = list({(r["model"], r["query"], r.get("seed", 0)): r for r in reversed(rows)}.values())[::-1]
    out: dict[tuple[str, str], dict] = {}
    for r in first:
        key = (r["model"], r["query"])
        if key not in out:
            out[key] = {**r, "documented": Counter(r["documented"]), "failures": Counter(r["failures"])}
            continue
        row = out[key]
        for field in ("calls", "answered", "slow", "seconds"):
            row[field] = row.get(field, 0) + r.get(field, 0)
        row["documented"].update(r["documented"])
        row["failures"].update(r["failures"])
        row["max_s"] = max(row["max_s"], r["max_s"])
        row["first_failure"] = row["first_failure"] or r["first_failure"]
    return list(out.values())


LOG_LINE = re.compile(r"^(\S+)\s+(\S+)\s+(\d+) calls,\s+(\d+) answered, (\d+) failures, (\d+) slow, max ([\d.]+) s")


def rows_from_log(path: Path) -> list[dict]:
    """The finished queries of a run that was stopped (its printed lines; refusals not broken down by kind)."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = LOG_LINE.match(line)
        if m:
            model, query, calls, answered, failures, slow, max_s = m.groups()
            refused = int(calls) - int(answered) - int(failures)
            rows.append({"model": model, "query": query, "calls": int(calls), "answered": int(answered),
                         "documented": Counter({"refused": refused} if refused else {}),
                         "failures": Counter({"(see the log)": int(failures)} if int(failures) else {}),
                         "first_failure": "", "slow": int(slow), "max_s": float(max_s)})
    return rows


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--examples", type=int, default=10_000, help="examples per query and model")
    p.add_argument("--big-models", default="all-minilm-l6-v2,minilm-mlm,minilm-gpt", help="models given --big-examples")
    p.add_argument("--big-examples", type=int, default=2_000, help="examples per query for the 22M-weight models")
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--queries", default="", help="only these queries (comma-separated names; default: every one)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save-rows", default="", help="also write this run's rows as JSON (to merge runs made side by side)")
    p.add_argument("--merge", default="", help="rows saved by earlier runs (comma-separated JSON files) to add to the table")
    p.add_argument("--no-write", action="store_true", help="do not write bench/RESULTS.md (one half of a split run)")
    p.add_argument("--planned", default="", help="with --merge of logs: the models the stopped runs were to reach")
    p.add_argument("--section", default="fuzz", help="the RESULTS.md section to write (a run of queries added since "
                   "the whole table was made: a section of its own, say fuzz-added)")
    args = p.parse_args()
    from engine import api

    api.one_thread_here()  # as the app's query thread
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        names = [n for n in args.models.split(",") if n]
        trained = trained_baselines(Path(tmp)) if {"ngram", "nnlm"} & set(names) else {}
        for name in names:
            handle = api.load(trained.get(name, name))
            big = name in args.big_models.split(",")
            only = set(filter(None, args.queries.split(","))) or None
            rows += fuzz(name, handle, args.big_examples if big else args.examples, args.seed, only)
    if args.save_rows:
        Path(args.save_rows).write_text(json.dumps(rows, default=dict), encoding="utf-8")
    for path in filter(None, args.merge.split(",")):
        if path.endswith(".log"):  # the printed lines of a run cut short: its finished queries
            rows += rows_from_log(Path(path))
            continue
        for row in json.loads(Path(path).read_text(encoding="utf-8")):
            row["documented"], row["failures"] = Counter(row["documented"]), Counter(row["failures"])
            rows.append(row)
    if args.no_write:
        return
    rows = combined(rows)
    total = sum(r["calls"] for r in rows)
    failures = sum(sum(r["failures"].values()) for r in rows)
    slow = sum(r["slow"] for r in rows)
    command = f"python bench/robustness/fuzz.py --examples {args.examples} --big-examples {args.big_examples}" + (
        f" --models {args.models} --queries {shlex.quote(args.queries)}" if args.queries else "") + (
        f" --section {args.section}" if args.section != "fuzz" else "") + (
        " (runs side by side, merged: --merge " + ", ".join(Path(m).name for m in args.merge.split(",")) + ")" if args.merge else "")
    asked = [q for q in args.queries.split(",") if q]
    title = (f"Hostile text, the queries added or rewritten since the whole table: {', '.join(asked)}" if asked
             else "Hostile text: every query of every model family, fuzzed")
    lines = [f"## {title}", "", f"Machine: {machine()}", "",
             f"`{command}`: hypothesis-generated text (any Unicode, lone "
             "surrogates, NUL and control characters, [MASK]/[CLS]/[SEP], zero-width and right-to-left marks, "
             "combining characters, emoji; three in eight real words with [MASK]s; one in a hundred a run of 100–800 repeated words) for the text and "
             "a second text (pairs, analogies), and any k (mostly 1–50; else negative, huge, None, NaN, a string, True), "
             f"{args.examples:,} examples per query and model ({args.big_examples:,} for {args.big_models}: "
             f"22M weights, a second or more per long text; {UNSUPPORTED_EXAMPLES} for a query the model does not have "
             "at all; a query's calls may come from runs with different seeds, added up), one thread. A call passes when it answers or raises "
             "a documented error (Word2BertError: InputError, UnknownWord, Unsupported…) with a message; any other "
             f"exception is a failure. Times are the query thread's CPU time; slow: over {SLOW_S:.0f} s.", "",
             f"**{total:,} calls, {failures} failures, {slow} slow.**", "",
             "| model | queries answered (of each query's calls) | documented refusals | failures | slowest call (s) |",
             "|---|---|---|---:|---:|"]
    for name in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == name]
        planned = args.big_examples if name in args.big_models.split(",") else args.examples
        answered = ", ".join(f"{r['query']} {r['answered']:,}" + (f" (of {r['calls']:,} calls: fewer run)"
                                                                  if r["calls"] < planned else "")
                             for r in mine if r["answered"])
        refusals: Counter[str] = Counter()
        for r in mine:
            refusals.update(r["documented"])
        refused = ", ".join(f"{k} {v:,}" for k, v in refusals.most_common())
        fails = sum(sum(r["failures"].values()) for r in mine)
        lines.append(f"| {name} | {answered or '—'} | {refused} | {fails} | {max(r['max_s'] for r in mine):.2f} |")
    names = [q for q, _ in queries(None) if not asked or q in asked]
    planned_models = list(dict.fromkeys([*(r["model"] for r in rows), *filter(None, args.planned.split(","))]))
    done = {(r["model"], r["query"]) for r in rows}
    missing = [f"{m}: {', '.join(q for q in names if (m, q) not in done)}" for m in planned_models
               if any((m, q) not in done for q in names)]
    if missing:
        lines += ["", "Not reached (the run was stopped first): " + "; ".join(missing) + "."]
    failed = [r for r in rows if r["failures"]]
    if failed:
        lines += ["", "Failures:", ""] + [f"- {r['model']} {r['query']}: " + "; ".join(
            f"{k} ×{v}" for k, v in r["failures"].items()) for r in failed]
    body = "\n".join(lines)
    print(body)
    write_section(args.section, body)


if __name__ == "__main__":
    main()
