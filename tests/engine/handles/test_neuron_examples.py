"""What makes an MLP neuron fire (engine/handles/neuron_examples.py): its outputs are the MLP's own, computed by hand;
the sentences come highest first and none read fires it higher; what it writes into the logits at its highest is
what the direct effects read for that neuron there; a post-LN BERT gives its sentences and says why not the rest."""

import threading

import numpy as np
import pytest
import torch.nn.functional as F

from engine import api
from engine.errors import Cancelled, InputError, Unsupported
from engine.handles.neuron_examples import _PEAKS

LAYER, NEURON = 2, 27  # gpt-tiny's layer 3 MLP neuron 27: one that writes "money" in the direct scene


@pytest.fixture(scope="module")
def gpt():
    return api.load("gpt-tiny")


@pytest.fixture(scope="module")
def found(gpt):
    told: list[tuple[float, str]] = []
    result = api.neuron_examples(gpt, LAYER, NEURON, k=6, progress=lambda f, m: told.append((f, m)))
    assert told and all(0 <= f <= 1 for f, _ in told) and "layer 3" in told[0][1]
    return result


def test_a_neurons_outputs_are_its_mlps_computed_by_hand(gpt, found):
    block = gpt.adapter.layer_modules()[1][LAYER]
    caught: list = []
    for example in found.examples[:3]:
        ids, segments, _, special, _ = gpt._encode(example.text)
        caught.clear()
        hook = block.ffn_in.register_forward_hook(lambda m, i, o: caught.append(o[0].detach().float().cpu()))
        try:
            gpt._forward(ids, segments, logits=False)
        finally:
            hook.remove()
        by_hand = F.gelu(caught[0], approximate="tanh")[:, NEURON].numpy()
        by_hand[np.array(special, bool)] = 0.0
        assert len(example.tokens) == len(ids)
        np.testing.assert_allclose(example.activation, by_hand, atol=1e-4)


def test_the_sentences_come_highest_first_and_none_read_fires_it_higher(gpt, found):
    peaks = [float(e.activation[e.peak]) for e in found.examples]
    assert len(peaks) == 6 and peaks == sorted(peaks, reverse=True)
    table = next(p for (_, layer), p in _PEAKS[gpt].items() if layer == LAYER)
    assert found.sentences == len(table.sentences) >= 300
    assert found.highest == pytest.approx(float(table.peaks[:, NEURON].max()), abs=1e-4)
    assert found.neurons == table.peaks.shape[1] == 1024
    for e in found.examples[:3]:  # where the table says each sentence's highest is
        index = table.sentences.index(e.text)
        assert int(table.where[index, NEURON]) == e.peak and table.ids[index] == tuple(gpt._encode(e.text)[0])
    assert 0 < found.fires < 1 and found.tokens > found.sentences
    assert not any(e.special[e.peak] for e in found.examples)  # (a special token never peaks)


def test_what_it_writes_at_its_highest_is_its_direct_effect_there(gpt, found):
    """The tokens it pushes up and down, read from its output column, against mlp_neurons on the sentence cut at its
    highest token (a left-to-right model reads nothing after it), measured as the promoted word against the demoted."""
    up, down = found.promotes[0], found.suppresses[0]
    assert up[1] > 0 > down[1] and len(found.promotes) == len(found.suppresses) == 8
    assert [v for _, v in found.promotes] == sorted((v for _, v in found.promotes), reverse=True)
    example = found.examples[0]
    prefix = "".join(t for t, s in zip(example.tokens[:example.peak + 1], example.special, strict=False) if not s)
    ids, _, _, _, _ = gpt._encode(prefix)
    assert len(ids) == example.peak + 1  # (the prefix reads as the same tokens)
    neurons = api.mlp_neurons(gpt, prefix, LAYER, up[0], down[0])
    assert float(neurons.activation[NEURON]) == pytest.approx(found.highest, rel=1e-4)
    assert float(neurons.effect[NEURON]) == pytest.approx(up[1] - down[1], rel=1e-3, abs=1e-4)


def test_another_neuron_of_the_layer_reads_the_corpus_no_more(gpt, found, monkeypatch):
    import engine.data.corpora

    def no(*args, **kwargs):
        raise AssertionError("the corpus was read again")

    monkeypatch.setattr(engine.data.corpora, "spread_sample", no)  # (the layer's table is kept)
    other = api.neuron_examples(gpt, LAYER, 40, k=3)
    assert other.neuron == 40 and len(other.examples) == 3 and other.sentences == found.sentences
    assert other.examples[0].text != found.examples[0].text or other.highest != found.highest


def test_a_post_ln_bert_gives_its_sentences_and_says_why_not_what_it_writes():
    bert = api.load("bert-tiny")
    got = api.neuron_examples(bert, 0, 5, k=3)
    assert len(got.examples) == 3 and got.promotes == got.suppresses == ()
    assert "post-LN" in got.writes_refusal
    assert all(a == 0 for a, s in zip(got.examples[0].activation, got.examples[0].special, strict=True) if s)


def test_bad_questions_get_clear_answers(gpt):
    with pytest.raises(InputError, match="no layer 9"):
        api.neuron_examples(gpt, 9, 0)
    with pytest.raises(InputError, match="no neuron 1024: 1,024 neurons"):
        api.neuron_examples(gpt, LAYER, 1024)
    with pytest.raises(InputError, match="k"):
        api.neuron_examples(gpt, LAYER, 0, k=0)
    with pytest.raises(Unsupported, match="no MLP neurons"):
        api.neuron_examples(api.load("ngram-kn3"), 0, 0)


def test_reading_the_corpus_stops_when_cancelled(gpt):
    stop = threading.Event()
    stop.set()
    _PEAKS.get(gpt, {}).clear()
    with api.cancellable(stop), pytest.raises(Cancelled):
        api.neuron_examples(gpt, 1, 0)
    assert not any(layer == 1 for _, layer in _PEAKS.get(gpt, {}))


@pytest.fixture(scope="module")
def hf_models(contextual_runs, tmp_path_factory, lab_handles):
    from tests.engine.handles.test_direct_effects import _llama_folder

    root = tmp_path_factory.mktemp("neurons")
    return {"llama": api.load(_llama_folder(root / "llama", contextual_runs)),
            "opt": api.load(_llama_folder(root / "opt", contextual_runs, "opt")), "hf-bert": lab_handles["hf-bert"]}


@pytest.mark.parametrize("which", ["llama", "opt"])
def test_a_hugging_face_decoders_neuron_writes_its_direct_effect(hf_models, which):
    """A Llama's gated MLP (down_proj reads act(gate) × up) and OPT's flattened one: the neuron's outputs and what it
    writes agree with mlp_neurons on the sentence cut at its highest token."""
    handle = hf_models[which]
    got = api.neuron_examples(handle, 1, 3, k=2)
    table = next(p for (_, layer), p in _PEAKS[handle].items() if layer == 1)  # (read 16 sentences a pass, padded)
    assert got.highest == pytest.approx(float(table.peaks[:, 3].max()), rel=1e-4)
    second = got.examples[1]
    assert float(second.activation[second.peak]) == pytest.approx(float(np.sort(table.peaks[:, 3])[-2]), rel=1e-4)
    example = got.examples[0]
    prefix = "".join(t for t, s in zip(example.tokens[:example.peak + 1], example.special, strict=False) if not s)
    from engine.handles.attribution import one_token

    def named(token: str) -> bool:  # (a random model's tokens: some a byte of a character, some a piece a word names
        try:                        # only after a space; the first a word names as itself)
            return handle._token_text(one_token(handle, token, "word")) == token
        except InputError:
            return False

    (up, more), (down, less) = (next(p for p in pairs if named(p[0])) for pairs in (got.promotes, got.suppresses))
    neurons = api.mlp_neurons(handle, prefix, 1, up, down)
    assert float(neurons.activation[3]) == pytest.approx(got.highest, rel=1e-3)
    assert float(neurons.effect[3]) == pytest.approx(more - less, rel=1e-3, abs=1e-5)


def test_a_hugging_face_encoders_neurons_are_read_in_its_bert_layers(hf_models):
    got = api.neuron_examples(hf_models["hf-bert"], 0, 1, k=4)
    assert len(got.examples) == 4 and got.neurons > 1 and "post-LN" in got.writes_refusal


def test_an_encoder_saved_without_a_head_gives_its_neurons_sentences(contextual_runs, tmp_path):
    """No head to predict words with (an encoder alone, a classifier's): its neurons fire all the same; the
    examples agree with the encoder's own MLP activation, computed by hand."""
    import transformers

    from tests.engine.finetune.test_one_wrapper import tiny_hf_folder

    folder = tiny_hf_folder(tmp_path / "with-head", contextual_runs, decoder=False)
    transformers.BertModel.from_pretrained(folder).save_pretrained(tmp_path / "alone")
    transformers.AutoTokenizer.from_pretrained(folder).save_pretrained(tmp_path / "alone")
    handle = api.load(tmp_path / "alone")
    with pytest.raises(api.Unsupported):
        api.lens_grid(handle, "the cat sat")  # (no head: the lens refuses)
    got = api.neuron_examples(handle, 1, 7, k=3)
    assert len(got.examples) == 3 and got.promotes == () and got.writes_refusal
    example = got.examples[0]
    layer = handle.adapter.layer_modules()[1][1]
    caught = []
    hook = layer.intermediate.register_forward_hook(lambda m, i, o: caught.append(o[0].detach()))
    try:
        ids, segments, _, special, _ = handle._encode(example.text)
        handle._forward(ids, segments, logits=False)
    finally:
        hook.remove()
    by_hand = caught[0][:, 7].float().cpu().numpy()  # (BertIntermediate's output: the activation, GELU applied)
    by_hand[np.array(special, bool)] = 0.0
    np.testing.assert_allclose(example.activation, by_hand[:len(example.activation)], atol=1e-5)
