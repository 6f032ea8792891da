"""Knocking out attention heads (engine/handles/head_ablation.py): each head's output replaced by its mean over the
text's tokens, on our BERT and GPT and on Hugging Face BERT and GPT-2 folders; checked against the same ablation
made a second way, by editing the output projection's weights."""

import numpy as np
import pytest
import torch

from engine import api
from engine.errors import InputError, Unsupported

TEXT = {"masked": "the striker scored a [MASK] in the match", "causal": "the striker scored a goal in the"}


def _projection(handle, layer):
    """Block ``layer``'s attention output projection, reached by each architecture's own path."""
    _, blocks = handle.adapter.layer_modules()
    block = blocks[layer]
    if hasattr(block, "attn_out"):
        return block.attn_out
    if hasattr(block, "attn"):
        return block.attn.c_proj  # GPT-2
    return block.attention.output.dense  # BERT


def _edited(handle, text, layer, head, heads, mean=None):
    """log P over the vocabulary at the prediction's position with head ``head`` of ``layer`` mean-ablated by
    editing weights: its columns of the output projection zeroed, what they would add for the head's mean output
    moved into the bias (the projection is linear: the same as feeding it the mean)."""
    module = _projection(handle, layer)
    kept: list[torch.Tensor] = []
    hook = module.register_forward_pre_hook(lambda m, inputs: kept.append(inputs[0][0].mean(0).detach().clone()))
    ids, segments, *_ = handle._encode(text.replace("[MASK]", handle.adapter.tokenizer.id_to_token(
        handle.adapter.mask_id)) if handle.adapter.objective == "masked" else text)
    position = ids.index(handle.adapter.mask_id) if handle.adapter.objective == "masked" else len(ids) - 1
    with torch.inference_mode():
        handle._forward(ids, segments, logits=True, positions=[position])
    hook.remove()
    mean = kept[0] if mean is None else mean
    size = mean.shape[0] // heads
    part = slice(head * size, (head + 1) * size)
    weight, bias = module.weight.data.clone(), module.bias.data.clone()
    try:
        with torch.no_grad():
            if isinstance(module, torch.nn.Linear):  # (out, in)
                module.bias += module.weight[:, part] @ mean[part]
                module.weight[:, part] = 0.0
            else:  # GPT-2's Conv1D: (in, out)
                module.bias += mean[part] @ module.weight[part, :]
                module.weight[part, :] = 0.0
        with torch.inference_mode():
            logits = handle._forward(ids, segments, logits=True, positions=[position]).logits
        return logits[0, 0].float().log_softmax(-1)
    finally:
        with torch.no_grad():  # (through the parameters, not .data: their versions tell caches of packed weights)
            module.weight.copy_(weight)
            module.bias.copy_(bias)


@pytest.mark.parametrize("which", ["bert-tiny", "gpt-tiny", "minilm-mlm", "sharp-gpt2"])
def test_a_knocked_out_head_costs_what_the_same_ablation_made_in_the_weights_costs(which, sharp_gpt2):
    """Our shipped BERT and GPT, the shipped MiniLM (a Hugging Face BERT), a Hugging Face GPT-2 (Conv1D)."""
    from engine.handles.attribution import one_token

    handle = sharp_gpt2 if which == "sharp-gpt2" else api.load(which)
    text = TEXT[handle.adapter.objective]
    result = api.head_ablation(handle, text)
    heads = handle.info["heads"]
    assert result.effect.shape == result.p_ablated.shape == (handle.adapter.n_layers, heads)
    assert result.value == pytest.approx(np.log(result.p_target), abs=1e-5)  # no foil: log P(target)
    target_id = one_token(handle, result.target.strip(), "target")
    for layer, head in ((0, 0), (handle.adapter.n_layers - 1, heads - 1), (handle.adapter.n_layers - 1, 1)):
        logp = _edited(handle, text, layer, head, heads)
        assert result.effect[layer, head] == pytest.approx(result.value - float(logp[target_id]), abs=1e-4)
        assert result.p_ablated[layer, head] == pytest.approx(float(logp[target_id].exp()), abs=1e-5)
    assert np.abs(result.effect).max() > 1e-2  # some head matters (the comparisons above are not of zeros)


def test_a_foil_explains_the_difference_and_every_row_is_the_same_pass():
    """With a foil, each head's effect is on log P(target) − log P(foil); P(target) with a head knocked out is the
    same whatever the foil; the strongest head is the largest effect."""
    handle = api.load("gpt-tiny")
    text = "The books on the top shelf of the library"
    plain = api.head_ablation(handle, text, "are")
    versus = api.head_ablation(handle, text, "are", "is")
    assert plain.target.strip() == versus.target.strip() == "are" and versus.foil.strip() == "is"
    assert versus.explained == "log P('are') − log P('is')" and plain.explained == "log P('are')"
    assert versus.value == pytest.approx(np.log(versus.p_target) - np.log(versus.p_foil), abs=1e-5)
    np.testing.assert_allclose(versus.p_ablated, plain.p_ablated, atol=1e-6)
    assert not np.allclose(versus.effect, plain.effect, atol=1e-3)  # the foil's share counts
    layer, head, effect = versus.strongest(1)[0]
    assert effect == pytest.approx(float(versus.effect.max())) and versus.effect[layer, head] == effect


def test_what_head_ablation_refuses_and_why(lab_handles, contextual_runs):
    with pytest.raises(InputError, match="no \\[MASK\\]"):
        api.head_ablation(lab_handles["bert"], "the striker scored a goal")
    with pytest.raises(InputError, match="the foil is the target itself"):
        api.head_ablation(api.load("gpt-tiny"), "The books on the top shelf", "are", "are")
    elmo = api.load(contextual_runs["elmo"][0])
    with pytest.raises(Unsupported, match="no attention heads to knock out"):
        api.head_ablation(elmo, "the cat sat on the")


def test_a_block_without_a_known_output_projection_is_refused_with_its_reason(lab_handles, monkeypatch):
    from engine.handles import head_ablation

    monkeypatch.setattr(head_ablation, "OUT_PROJECTIONS", ("nowhere",))
    with pytest.raises(Unsupported, match="heads cannot be knocked out one by one"):
        api.head_ablation(lab_handles["hf-gpt2"], TEXT["causal"])


def test_a_run_and_its_hugging_face_export_need_the_same_heads(tmp_path):
    """Our shipped GPT and the GPT-2 folder it exports to (its heads a Conv1D's rows, not a Linear's columns):
    the same effect for every head."""
    from engine.cli.export import export_hf

    ours = api.load("gpt-tiny")
    theirs = api.load(export_hf(ours.path, tmp_path / "gpt2"))
    text = "The books on the top shelf of the library"
    a, b = api.head_ablation(ours, text, "are", "is"), api.head_ablation(theirs, text, "are", "is")
    assert a.effect.shape == b.effect.shape and np.abs(a.effect).max() > 0.05
    np.testing.assert_allclose(a.effect, b.effect, atol=2e-4)


def test_knocking_out_heads_leaves_the_models_other_queries_alone(sharp_gpt2):
    """The knock-out hooks sit on the loaded model: a query another thread runs meanwhile (another panel's) gets
    the model's own answer, and the knock-outs their own."""
    from tests.engine.handles.test_lens import while_another_thread_queries

    text = "he drove the truck to"
    baseline = api.head_ablation(sharp_gpt2, text)
    answers = while_another_thread_queries(sharp_gpt2, lambda: api.head_ablation(sharp_gpt2, text))
    assert all(np.allclose(a.effect, baseline.effect, atol=1e-5) for a in answers)


def test_heads_knocked_out_together_are_each_replaced_in_one_pass():
    """``knocked_out``'s groups (the bench's top k heads at once): a group of one is the table's own row, and a group
    of two heads of different layers is the same as both knocked out in the weights at once."""
    from engine.handles.head_ablation import knocked_out
    from engine.handles.lens import _inputs, prediction_position

    handle = api.load("bert-tiny")
    text = TEXT["masked"]
    result = api.head_ablation(handle, text)
    ids, segments, _, _ = _inputs(handle, text, 128)
    position = prediction_position(handle, ids, "no [MASK]")
    pair = [(0, 1), (3, 2)]
    _, logp = knocked_out(handle, ids, segments, position, [[(1, 2)], pair])
    with torch.inference_mode():
        clean = handle._forward(ids, segments, logits=True, positions=[position]).logits[0, 0].float()
    target = int(clean.argmax())
    assert float(logp[0, target]) == pytest.approx(float(np.log(result.p_ablated[1, 2])), abs=1e-5)
    heads = handle.info["heads"]
    modules = [_projection(handle, layer) for layer, _ in pair]
    means = []
    hooks = [m.register_forward_pre_hook(lambda m, inputs: means.append(inputs[0][0].mean(0).detach().clone()))
             for m in modules]
    with torch.inference_mode():
        handle._forward(ids, segments, logits=True, positions=[position])
    for h in hooks:
        h.remove()
    saved = [(m.weight.detach().clone(), m.bias.detach().clone()) for m in modules]
    try:
        with torch.no_grad():
            for m, mean, (_, head) in zip(modules, means, pair):
                part = slice(head * mean.shape[0] // heads, (head + 1) * mean.shape[0] // heads)
                m.bias += m.weight[:, part] @ mean[part]
                m.weight[:, part] = 0.0
        with torch.inference_mode():
            both = handle._forward(ids, segments, logits=True, positions=[position]).logits[0, 0].float().log_softmax(-1)
    finally:
        with torch.no_grad():
            for m, (w, b) in zip(modules, saved):
                m.weight.copy_(w)
                m.bias.copy_(b)
    assert float(logp[1, target]) == pytest.approx(float(both[target]), abs=1e-4)


def _patched_at(handle, text, layer, head, heads, token):
    """log P at the prediction's position with head ``head`` of ``layer`` mean-ablated at ``token`` alone, made a
    second way: after the output projection, the head's share at that token swapped for its mean's (the projection
    is linear: W·mean − W·x of the head's columns added to that token's output)."""
    module = _projection(handle, layer)
    kept: list[torch.Tensor] = []
    ids, segments, *_ = handle._encode(text.replace("[MASK]", handle.adapter.tokenizer.id_to_token(
        handle.adapter.mask_id)) if handle.adapter.objective == "masked" else text)
    position = ids.index(handle.adapter.mask_id) if handle.adapter.objective == "masked" else len(ids) - 1

    def keep(m, inputs):
        kept.append(inputs[0][0].detach().clone())

    def shift(m, inputs, output):
        x = inputs[0][0]
        size = x.shape[-1] // heads
        part = slice(head * size, (head + 1) * size)
        delta = kept[0].mean(0)[part] - x[token, part]
        w = m.weight[:, part] if isinstance(m, torch.nn.Linear) else m.weight[part, :].T  # (out, head width)
        output = output.clone()
        output[0, token] += w @ delta
        return output

    hook = module.register_forward_pre_hook(keep)
    with torch.inference_mode():
        handle._forward(ids, segments, logits=True, positions=[position])
    hook.remove()
    hook = module.register_forward_hook(shift)
    try:
        with torch.inference_mode():
            logits = handle._forward(ids, segments, logits=True, positions=[position]).logits
    finally:
        hook.remove()
    return logits[0, 0].float().log_softmax(-1), position


@pytest.mark.parametrize("which", ["bert-tiny", "gpt-tiny", "minilm-mlm", "sharp-gpt2"])
def test_a_head_knocked_out_at_one_token_costs_what_the_same_swap_after_its_projection_costs(which, sharp_gpt2):
    """Where a head matters, token by token: each token's cost is the ablation made a second way (after the output
    projection, through its weights); knocked out at every token it is the heads table's cell; in the last layer
    only the predicted position's output reaches the prediction, so every other token costs nothing."""
    from engine.handles.attribution import one_token

    handle = sharp_gpt2 if which == "sharp-gpt2" else api.load(which)
    text = TEXT[handle.adapter.objective]
    heads, layers = handle.info["heads"], handle.adapter.n_layers
    table = api.head_ablation(handle, text)
    target_id = one_token(handle, table.target.strip(), "target")
    layer, head, _ = table.strongest(1)[0]
    where = api.head_positions(handle, text, layer, head)
    assert (where.layer, where.head, where.target, where.position) == (layer, head, table.target, table.position)
    assert where.tokens == table.tokens and where.effect.shape == (len(table.tokens),)
    assert where.every == pytest.approx(float(table.effect[layer, head]), abs=1e-4)
    for token in {0, where.position, where.strongest, len(where.tokens) - 1}:
        logp, _ = _patched_at(handle, text, layer, head, heads, token)
        assert where.effect[token] == pytest.approx(where.value - float(logp[target_id]), abs=1e-4)
    assert np.abs(where.effect).max() > 1e-3  # (the comparisons above are not of zeros)
    last = api.head_positions(handle, text, layers - 1, heads - 1)
    others = np.delete(last.effect, last.position)
    np.testing.assert_allclose(others, 0.0, atol=1e-5)


def test_where_a_head_matters_is_asked_of_a_head_the_model_has():
    handle = api.load("bert-tiny")
    layers, heads = handle.adapter.n_layers, handle.info["heads"]
    for layer, head in ((layers, 0), (0, heads), (-1, 0), (True, 0), ("1", 0)):
        with pytest.raises(InputError, match=f"{layers} layers \\(0-{layers - 1}\\) of {heads} heads"):
            api.head_positions(handle, TEXT["masked"], layer, head)
    foiled = api.head_positions(handle, TEXT["masked"], 1, 2, "goal", "point")
    assert foiled.explained == "log P('goal') − log P('point')" and foiled.foil.strip() == "point"
    assert foiled.value == pytest.approx(np.log(foiled.p_target) - np.log(foiled.p_foil), abs=1e-5)


def test_models_without_heads_refuse_where_a_head_matters_with_the_reason(contextual_runs):
    elmo = api.load(contextual_runs["elmo"][0])
    with pytest.raises(Unsupported, match="no attention heads to knock out"):
        api.head_positions(elmo, "the cat sat on the", 0, 0)
    with pytest.raises(Unsupported, match="no attention heads to knock out"):
        api.head_positions(api.load("word2vec-sgns"), "the cat sat on the", 0, 0)


def test_knocked_out_to_its_corpus_mean_a_head_costs_what_that_mean_put_in_the_weights_costs():
    """``mean_over="corpus"``: each head's output replaced by its mean over held-out sentences of the corpus (the
    mean checked a second way: what the output projection writes, averaged over the same tokens, is the projection
    of it), the same as that mean moved into the projection's bias; kept for the model; the table and the token
    strip agree; not the text's own means."""
    from engine.data.corpora import spread_sample
    from engine.handles.attribution import one_token
    from engine.handles.head_ablation import MAX_ABLATION_TOKENS, out_projections
    from engine.handles.head_means import MEAN_SENTENCES, corpus_head_means
    from engine.handles.lens import _inputs

    handle = api.load("bert-tiny")
    heads, layers = handle.info["heads"], handle.adapter.n_layers
    means = corpus_head_means(handle, out_projections(handle))
    assert corpus_head_means(handle, out_projections(handle)) is means and len(means) == layers  # read once
    module = _projection(handle, 1)
    written = []
    hook = module.register_forward_hook(lambda m, inputs, out: written.append(out[0].double()))
    try:
        for sentence in spread_sample("default", MEAN_SENTENCES, "heldout"):
            ids, segments, _, _ = _inputs(handle, sentence, MAX_ABLATION_TOKENS)
            with torch.inference_mode():
                handle._forward(ids, segments, logits=False)
    finally:
        hook.remove()
    average = torch.cat(written).mean(0)
    expected = module.weight.double() @ means[1].double() + module.bias.double()
    torch.testing.assert_close(average, expected, atol=1e-4, rtol=1e-4)
    text = TEXT["masked"]
    table = api.head_ablation(handle, text, mean_over="corpus")
    assert table.mean_over == "corpus"
    target_id = one_token(handle, table.target.strip(), "target")
    for layer, head in ((0, 0), (layers - 1, heads - 1)):
        logp = _edited(handle, text, layer, head, heads, mean=means[layer])
        assert table.effect[layer, head] == pytest.approx(table.value - float(logp[target_id]), abs=1e-4)
    own = api.head_ablation(handle, text)
    assert own.mean_over == "text" and not np.allclose(own.effect, table.effect, atol=1e-3)
    layer, head, _ = table.strongest(1)[0]
    where = api.head_positions(handle, text, layer, head, mean_over="corpus")
    assert where.mean_over == "corpus" and where.every == pytest.approx(float(table.effect[layer, head]), abs=1e-4)
    with pytest.raises(InputError, match="mean over text or corpus"):
        api.head_ablation(handle, text, mean_over="zero")


def test_patched_from_a_contrast_sentence_a_head_costs_what_its_contrast_output_put_in_the_weights_costs():
    """Activation patching: each head's output replaced by its output on a contrast sentence of as many tokens, token
    by token. A last-layer head of a left-to-right model reaches the prediction only at the position read, so the
    same patch made in its output projection's weights (its columns zeroed, its contrast output at that position
    moved into the bias) must cost the same; at a token before the first that differs, its output is the text's own
    and patching there costs nothing."""
    from engine.handles.head_ablation import contrast_outputs

    handle = api.load("gpt-tiny")
    text, contrast = "The dog in the garden", "The dogs in the garden"
    result = api.head_ablation(handle, text, "is", "are", contrast=contrast)
    assert (result.mean_over, result.contrast) == ("contrast", contrast)
    layers, heads = result.effect.shape
    ids, segments, *_ = handle._encode(contrast)
    outputs = contrast_outputs(handle, ids, segments)
    assert outputs[0].shape[0] == len(ids) == len(result.tokens)
    t_is, t_are = (handle.adapter.tokenizer.encode(w).ids[0] for w in (" is", " are"))
    for head in range(heads):
        logp = _edited(handle, text, layers - 1, head, heads, mean=outputs[layers - 1][-1])
        assert result.effect[layers - 1, head] == pytest.approx(
            result.value - float(logp[t_is] - logp[t_are]), abs=1e-4)
    assert np.abs(result.effect).max() > 0.3  # the head that reads "dog"/"dogs" matters
    layer, head, _ = result.strongest(1)[0]
    where = api.head_positions(handle, text, layer, head, "is", "are", contrast=contrast)
    differs = next(t for t in range(len(ids)) if ids[t] != handle._encode(text)[0][t])
    assert np.all(where.effect[:differs] == 0.0) and where.every == pytest.approx(float(result.effect[layer, head]),
                                                                                 abs=1e-5)
    last = api.head_positions(handle, text, layers - 1, 0, "is", "are", contrast=contrast)
    assert np.allclose(last.effect[:-1], 0.0, atol=1e-6)  # a last-layer head: only the position read counts
    assert (where.mean_over, where.contrast) == ("contrast", contrast)


def test_a_contrast_sentence_that_cannot_be_aligned_is_refused():
    handle = api.load("gpt-tiny")
    with pytest.raises(InputError, match="as many tokens as the text"):
        api.head_ablation(handle, "The dog in the garden", contrast="The dog sat")
    with pytest.raises(InputError, match="is the text itself"):
        api.head_ablation(handle, "The dog in the garden", contrast="The dog in the garden")
