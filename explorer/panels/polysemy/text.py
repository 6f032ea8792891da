"""What the polysemy lens writes: nearest occurrences from either source (a whole-corpus index or a word's
occurrences fetched on demand), sentences with the word highlighted, and the All models view; and the word the
typed sentences share."""

from __future__ import annotations

import html
from typing import Any

COMPARE_K = 3  # nearest occurrences per model in the All models view


def layer_similarities(typed: list[Any]) -> list[float]:
    """The cosine between the first two typed occurrences at every layer ((layers, dim) each); [] for fewer
    than two. Near 1 where the model gives the word one vector whatever the sentence, lower where the
    sentences pull it apart: "layer by layer" in one line."""
    import numpy as np

    if len(typed) < 2:
        return []
    a, b = (np.asarray(t, np.float64) for t in typed[:2])
    dots = (a * b).sum(1)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return [float(d / n) if n > 0 else 0.0 for d, n in zip(dots, norms, strict=True)]


def layers_html(similarities: list[float], layer: int) -> str:
    """One line under the lens's message: the two typed occurrences' cosine per layer, the shown layer bold."""
    if not similarities:
        return ""
    cells = [f"<b>{i}: {s:.2f}</b>" if i == layer else f"{i}: {s:.2f}" for i, s in enumerate(similarities)]
    return ("Typed occurrences 1 and 2, cosine by layer: " + " · ".join(cells)
            + " <small>(1.00: one vector whatever the sentence; lower: the model tells them apart)</small>")


def nearest(source: Any, word: str, query: Any, layer: int, k: int) -> list[Any]:
    """The nearest occurrences from a whole-corpus index or from a word's occurrences fetched on demand
    (called on the query thread: the engine's types are imported there)."""
    from engine.api import CorpusIndex

    if isinstance(source, CorpusIndex):
        return source.neighbours(word, query, layer, k=k)
    return source.neighbours(query, layer, k=k)


def neighbours_html(word: str, groups: list[tuple[str, list[Any]]], colours: list[str], shown: int) -> str:
    """The nearest corpus occurrences of each typed occurrence (the first ``shown`` of them), each group headed by
    its typed sentence in its colour; the rest are counted (an export has them all)."""
    parts = []
    for g, (sentence, hits) in enumerate(groups[:shown]):
        colour = colours[g % len(colours)]
        parts.append(f"<p style='color:{colour}'><b>{g + 1}. {highlight(sentence, word)}</b></p><ul>")
        for h in hits:
            parts.append(f"<li><span style='color:{colour}'>{h.similarity:.3f}</span> — {highlight(h.sentence, word)}</li>")
        parts.append("</ul>")
    if len(groups) > shown:
        parts.append(f"<p><i>… and {len(groups) - shown} more typed occurrences of “{word}”: right-click here to copy "
                     "or save every one's neighbours.</i></p>")
    return "".join(parts)


def compare_html(name: str, word: str, layer: int, groups: list[tuple[str, list[Any]]],
                 others: list[tuple[str, int, list[tuple[str, list[Any]]]]], colours: list[str],
                 senses: dict[str, tuple[float, int]] | None = None) -> str:
    """Every contextual model at once, side by side: one column per model, one row per typed occurrence
    (its sentence across the columns, then the COMPARE_K nearest corpus occurrences each model finds); under each
    model's name its measured sense separation where ``senses`` has it, (score, the layer it was measured at: the
    catalog's, for shipped models) and the model is shown at that layer, so that the room can tell a model that
    confuses the senses from one that does not."""
    models = [(name, layer, groups), *others]
    measured = {m: score for m, (score, at) in (senses or {}).items() if any(n == m and lay == at for n, lay, _ in models)}
    shared = shared_hits(models)
    parts = [f"<p>“{html.escape(word)}”: the {COMPARE_K} nearest corpus occurrences of each typed occurrence, one "
             "column per model (colours as in the sentences list)."
             + (" ◆ marks a corpus sentence that more than one model puts near the same typed occurrence."
                if shared else "")
             + (" <i>senses</i>: on the sense set, how often an occurrence's nearest has its sense (0.47 by "
                "chance)."
                if measured else "") + "</p>",
             "<table width='100%' cellspacing='0' cellpadding='4'><tr>"]
    width = 100 // len(models)
    parts += [f"<th width='{width}%' align='left'>{html.escape(model_name)} <small>(layer {model_layer}"
              + (f" · senses {measured[model_name]:.2f}" if model_name in measured else "") + ")</small></th>"
              for model_name, model_layer, _ in models]
    parts.append("</tr>")
    for g, (sentence, _) in enumerate(groups):
        colour = colours[g % len(colours)]
        parts.append(f"<tr><td colspan='{len(models)}' style='color:{colour}; border-top: 1px solid #999'>"
                     f"<b>{g + 1}. {highlight(sentence, word)}</b></td></tr><tr>")
        for _, _, model_groups in models:
            hits = model_groups[g][1] if g < len(model_groups) else []
            message = model_groups[0][0] if model_groups and not model_groups[0][1] and len(model_groups) == 1 else ""
            cells = "<br>".join(f"{'◆ ' if (g, h.sentence) in shared else ''}{h.similarity:.2f} "
                                f"{snippet(h.sentence, word)}" for h in hits[:COMPARE_K]
                                ) or html.escape(message or "—")  # a model that could not answer says why
            parts.append(f"<td valign='top'>{cells}</td>")
        parts.append("</tr>")
    parts.append("</table>")
    return "".join(parts)


def shared_hits(models: list[tuple[str, int, list[tuple[str, list[Any]]]]]) -> set[tuple[int, str]]:
    """(typed occurrence, corpus sentence) pairs that two or more models list among their COMPARE_K nearest."""
    seen: dict[tuple[int, str], int] = {}
    for _, _, groups in models:
        for g, (_, hits) in enumerate(groups):
            for sentence in {h.sentence for h in hits[:COMPARE_K]}:
                seen[(g, sentence)] = seen.get((g, sentence), 0) + 1
    return {key for key, count in seen.items() if count > 1}


def snippet(sentence: str, word: str, width: int = 70) -> str:
    """About ``width`` characters of ``sentence`` around the first ``word``, as HTML with it highlighted."""
    from engine.api import word_spans

    start = next((a for a, b in word_spans(sentence) if sentence[a:b].lower() == word), 0)
    a, b = max(0, start - width // 2), min(len(sentence), start + width // 2)
    a = sentence.rfind(" ", 0, a) + 1 if a else 0
    cut = sentence[a:b]
    return ("…" if a else "") + highlight(cut, word) + ("…" if b < len(sentence) else "")


def highlight(sentence: str, word: str) -> str:
    """The sentence as HTML with every occurrence of ``word`` in bold."""
    from engine.api import word_spans

    out, last = [], 0
    for a, b in word_spans(sentence):
        if sentence[a:b].lower() == word:
            out.append(html.escape(sentence[last:a]) + f"<b><u>{html.escape(sentence[a:b])}</u></b>")
            last = b
    return "".join(out) + html.escape(sentence[last:])


def repeated_word(sentences: list[str]) -> str:
    """The word the typed sentences share, lower-cased, for a lens opened with none chosen ("bank" in "the bank of
    the river" and "cash at the bank"): of the words in more than one sentence, those that are not function words
    ("bus", not "the", in "the bus stopped" and "we took the bus") first, then the longest, then the first of
    equals; "" where no word repeats."""
    from engine.api import word_tokenize

    return shared_word([word_tokenize(s) for s in sentences])


def shared_word(tokens: list[list[str]]) -> str:
    """``repeated_word`` of sentences already split into words (the lens splits them once for its chips too)."""
    from engine.api import is_function_word

    seen: dict[str, int] = {}  # word -> sentences it is in
    first: dict[str, int] = {}  # word -> where it first comes (one pass: a long text stays quick on the GUI thread)
    for sentence in tokens:
        words = [w.lower() for w in sentence if any(c.isalpha() for c in w)]
        for w in words:
            first.setdefault(w, len(first))
        for w in set(words):
            seen[w] = seen.get(w, 0) + 1
    shared = [w for w, n in seen.items() if n > 1]
    return min(shared, key=lambda w: (is_function_word(w), -len(w), first[w])) if shared else ""


def layer_tip(model: str, senses: int, top: int) -> str:
    """The layer slider's tooltip: what its layers are, and why it opened where it did."""
    where = (f"{model} opens at layer {senses}, which tells word senses apart better than its last ({top}) on "
             "word2bert's development sense sentences, beyond the noise (bench/quality, sense layers)." if senses != top
             else f"{model} opens at its last layer, {top}; slide to see the others.")
    return f"Layer 0 is the embeddings, layer k the k-th layer's output. {where}"
