"""Each head's direct effect on the logits (engine/handles/direct_effects.py): the parts add up to the model's own
logit difference; a GPT-2's head read by hand from its weight matrices (TransformerLens's way) agrees; our GPT and
its GPT-2 export agree; a Llama's RMSNorm and Gemma's (1 + weight) are found; OPT's flattened MLP is read; BERT's post-LN blocks are refused."""

import numpy as np
import pytest
import torch

from engine import api
from engine.errors import Unsupported
from engine.handles.direct_effects import frozen_norm

TEXT = "The books on the top shelf of the library"


def _llama_folder(folder, contextual_runs, kind="llama"):
    """A 2-layer Hugging Face Llama (RMSNorm, no biases; or Gemma: RMSNorm of 1 + weight, scaled embeddings) on the
    test GPT run's byte-level BPE, its weights scaled up so that its heads matter."""
    import transformers

    from engine.data.text import load_subword_tokenizer

    tok = load_subword_tokenizer(contextual_runs["gpt"][0] / "tokenizer.json")
    end = tok.token_to_id("<|endoftext|>")
    settings = {"vocab_size": tok.get_vocab_size(), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64,
                "bos_token_id": end, "eos_token_id": end}
    config, model = {"llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
                     "gemma": (transformers.GemmaConfig, transformers.GemmaForCausalLM),
                     "opt": (transformers.OPTConfig, transformers.OPTForCausalLM)}[kind]
    if kind == "opt":  # (its MLP reads its tokens flattened)
        settings = {**{k: v for k, v in settings.items() if k not in ("intermediate_size", "num_key_value_heads")},
                    "ffn_dim": 64, "word_embed_proj_dim": 32}
    torch.manual_seed(0)
    network = model(config(**settings, **({"head_dim": 8} if kind == "gemma" else {})))
    with torch.no_grad():
        for name, parameter in network.named_parameters():
            if "norm" not in name:
                parameter.mul_(4.0)
            else:
                parameter.add_(torch.randn_like(parameter) * 0.3)  # (a norm's weight not all ones: its form shows)
    network.save_pretrained(folder)
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                         unk_token="<|endoftext|>").save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def decoders(contextual_runs, tmp_path_factory, sharp_gpt2):
    root = tmp_path_factory.mktemp("direct")
    return {"gpt-tiny": api.load("gpt-tiny"), "sharp-gpt2": sharp_gpt2,
            "llama": api.load(_llama_folder(root / "llama", contextual_runs)),
            "gemma": api.load(_llama_folder(root / "gemma", contextual_runs, "gemma")),
            "opt": api.load(_llama_folder(root / "opt", contextual_runs, "opt"))}


@pytest.mark.parametrize("which", ["gpt-tiny", "sharp-gpt2", "llama", "gemma", "opt"])
def test_the_parts_add_up_to_the_models_own_logit_difference(decoders, which):
    """With a foil, the logit difference is log P(target) − log P(foil): the knock-outs' clean value, measured by
    another pass; every head, MLP, the embedding and the biases add up to it."""
    handle = decoders[which]
    ablation = api.head_ablation(handle, TEXT)
    target, foil = ("are", "is") if which == "gpt-tiny" else ("the", "a")  # (a random model's top token: a byte)
    both = api.head_ablation(handle, TEXT, target, foil)
    direct = both.direct
    assert direct is not None, both.direct_refusal
    assert direct.explained.startswith("logit(")
    assert direct.value == pytest.approx(both.value, abs=1e-3)  # log P(target) − log P(foil), from the knock-outs
    assert float(direct.effect.sum()) + direct.rest == pytest.approx(direct.value, abs=1e-3)
    assert direct.effect.shape == ablation.effect.shape and direct.mlps.shape == (ablation.effect.shape[0],)
    assert np.abs(direct.effect).max() > 1e-3  # (the heads write something: not a sum of zeros)
    alone = api.direct_effects(handle, TEXT, target, foil)
    np.testing.assert_allclose(alone.effect, direct.effect, atol=1e-5)
    plain = api.direct_effects(handle, TEXT)  # no foil: the top word's logit above the mean logit
    assert plain.target == ablation.target and plain.explained.endswith("− the mean logit")
    assert float(plain.effect.sum()) + plain.rest == pytest.approx(plain.value, abs=1e-3)


def test_a_gpt2_heads_direct_effect_read_by_hand_from_its_weights(decoders):
    """TransformerLens's reading, written out: head h's slice of the merged heads times its rows of the Conv1D
    output projection, centred, divided by the final LayerNorm's scale at the text, times its weight, against the
    unembedding rows of the target less the foil's."""
    handle = decoders["sharp-gpt2"]
    body = handle.adapter.body
    result = api.direct_effects(handle, TEXT, "the", "a")
    ids, segments, *_ = handle._encode(TEXT)
    merged, final = [], []
    hooks = [block.attn.c_proj.register_forward_pre_hook(lambda m, i: merged.append(i[0][0, -1].clone()))
             for block in body.h]
    hooks.append(body.ln_f.register_forward_pre_hook(lambda m, i: final.append(i[0][0, -1].clone())))
    with torch.inference_mode():
        handle._forward(ids, segments, logits=True, positions=[len(ids) - 1])
    for h in hooks:
        h.remove()
    with torch.no_grad():  # (the weights' products: no graph)
        x = final[0].double()
        scale = torch.sqrt(x.var(unbiased=False) + body.ln_f.eps)
        unembed = handle.adapter.model.lm_head.weight.double()
        t, f = (handle.adapter.tokenizer.encode(w, add_special_tokens=False).ids[0] for w in (" the", " a"))
        heads, size = 4, body.config.n_embd // 4
        for layer in range(2):
            for head in range(heads):
                part = slice(head * size, (head + 1) * size)
                written = merged[layer][part].double() @ body.h[layer].attn.c_proj.weight[part].double()  # (d,)
                read = (written - written.mean()) / scale * body.ln_f.weight.double()
                assert result.effect[layer, head] == pytest.approx(float(read @ (unembed[t] - unembed[f])), abs=1e-4)


def test_a_run_and_its_gpt2_export_give_each_head_the_same_direct_effect(tmp_path):
    from engine.cli.export import export_hf

    ours = api.load("gpt-tiny")
    theirs = api.load(export_hf(ours.path, tmp_path / "gpt2"))
    a, b = api.direct_effects(ours, TEXT, "are", "is"), api.direct_effects(theirs, TEXT, "are", "is")
    assert np.abs(a.effect).max() > 0.05
    np.testing.assert_allclose(a.effect, b.effect, atol=2e-4)
    np.testing.assert_allclose(a.mlps, b.mlps, atol=2e-4)


def test_the_final_norms_form_is_found_by_its_own_output():
    torch.manual_seed(0)
    x = torch.randn(16) * 3 + 1
    layer_norm = torch.nn.LayerNorm(16)
    rms = torch.nn.RMSNorm(16, eps=1e-6)
    with torch.no_grad():
        for norm in (layer_norm, rms):
            norm.weight.add_(torch.randn(16) * 0.5)
        layer_norm.bias.add_(torch.randn(16))
    parts = torch.randn(3, 16)
    for norm in (layer_norm, rms):
        with torch.no_grad():
            linear, offset = frozen_norm(norm, x, norm(x))
            # the parts of a stream, each read with the scale held: they add up to the norm of their sum
            whole = parts.sum(0) + x - parts.sum(0)
            assert torch.allclose(linear(torch.cat([parts, (x - parts.sum(0))[None]])).sum(0) + offset,
                                  norm(whole).double(), atol=1e-5)

    class Doubled(torch.nn.Module):
        weight = torch.nn.Parameter(torch.ones(16))

        def forward(self, v):
            return 2 * v
    with pytest.raises(Unsupported, match="neither a LayerNorm nor an RMSNorm"):
        frozen_norm(Doubled(), x, 2 * x)


def test_post_ln_networks_are_refused_with_the_reason_and_the_knock_outs_stay(tmp_path):
    import transformers

    for name in ("bert-tiny", "minilm-mlm"):
        handle = api.load(name)
        result = api.head_ablation(handle, "the striker scored a [MASK] in the match")
        assert result.direct is None and "post-LN" in result.direct_refusal
        assert np.abs(result.effect).max() > 0  # the knock-outs are there
        with pytest.raises(Unsupported, match="post-LN"):
            api.direct_effects(handle, "the striker scored a [MASK] in the match")
    from engine.models.wrappers.readout import hf_pre_norm_refusal

    assert hf_pre_norm_refusal("opt", transformers.OPTConfig(do_layer_norm_before=False)) is not None
    assert hf_pre_norm_refusal("opt", transformers.OPTConfig()) is None
    unknown = hf_pre_norm_refusal("x", transformers.T5Config())
    assert unknown is not None and "'t5' network" in str(unknown)


@pytest.mark.parametrize("which", ["gpt-tiny", "sharp-gpt2", "llama", "opt"])
def test_an_mlps_neurons_add_up_to_its_direct_effect(decoders, which):
    """Read another way (the stream's direction the measure reads, found by a gradient, against each neuron's
    column of the output projection): every neuron and the projection's bias add up to the MLP's cell of the direct
    table, layer by layer; the strongest neurons are the largest |effect|."""
    handle = decoders[which]
    target, foil = ("money", "water") if which == "gpt-tiny" else ("the", "a")
    text = "She went to the bank to deposit her" if which == "gpt-tiny" else TEXT
    direct = api.direct_effects(handle, text, target, foil)
    for layer in range(direct.mlps.shape[0]):
        neurons = api.mlp_neurons(handle, text, layer, target, foil)
        assert neurons.total == pytest.approx(float(direct.mlps[layer]), abs=1e-3)
        assert neurons.effect.shape == neurons.activation.shape and np.abs(neurons.effect).max() > 0
        first = neurons.strongest(1)[0]
        assert abs(neurons.effect[first]) == pytest.approx(float(np.abs(neurons.effect).max()))
    with pytest.raises(api.InputError, match="has no layer"):
        api.mlp_neurons(handle, text, direct.mlps.shape[0])
    with pytest.raises(Unsupported, match="post-LN"):
        api.mlp_neurons(api.load("bert-tiny"), "the [MASK] sat", 0)
