"""Token embeddings that start from GloVe: equal to the projected GloVe vectors, with GloVe's similarities."""

import numpy as np
import pytest
import torch

from engine import api
from engine.training.init_embeddings import init_token_embeddings, projected_rows, token_text


class Vocab:
    """The part of a tokenizers.Tokenizer the initialiser reads."""

    def __init__(self, tokens):
        self.tokens = tokens

    def get_vocab(self):
        return {t: i for i, t in enumerate(self.tokens)}


TOKENS = ["[PAD]", "[CLS]", "money", "bank", "deposit", "##ing", "Ġriver", "xqzzv", "piano"]


def test_rows_glove_knows_start_as_its_projected_vectors_and_keep_its_cosines():
    glove = api.load("glove-6b-50d").static_vectors()
    emb = torch.nn.Embedding(len(TOKENS), 64)
    torch.nn.init.normal_(emb.weight, std=0.02)
    before = emb.weight.detach().clone()
    info = init_token_embeddings(emb, Vocab(TOKENS), "glove-6b-50d", seed=3)
    ids, rows = projected_rows(Vocab(TOKENS), glove, 64, float(before.norm(dim=1).mean()), seed=3)
    assert torch.allclose(emb.weight[torch.from_numpy(ids)], torch.from_numpy(rows))
    assert info["init_embeddings_rows"] == 6  # money bank deposit ing river piano (not [PAD], [CLS], xqzzv)
    for unknown in (0, 1, 7):
        assert torch.equal(emb.weight[unknown], before[unknown])  # left random
    w = emb.weight.detach().cpu().numpy()

    def cos(a, b):
        return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))

    for a, b in (("money", "bank"), ("money", "piano"), ("river", "bank")):
        i, j = TOKENS.index(a) if a in TOKENS else TOKENS.index("Ġriver"), TOKENS.index(b)
        assert cos(w[i], w[j]) == pytest.approx(cos(glove.vector(token_text(TOKENS[i])), glove.vector(b)), abs=1e-4)
    assert cos(w[2], w[3]) > cos(w[2], w[8])  # money is nearer bank than piano, from the first step


def test_no_source_changes_nothing_and_a_bad_one_is_refused():
    emb = torch.nn.Embedding(len(TOKENS), 64)
    before = emb.weight.detach().clone()
    assert init_token_embeddings(emb, Vocab(TOKENS), "") == {}
    assert torch.equal(emb.weight, before)
    with pytest.raises(ValueError, match="init_embeddings"):
        init_token_embeddings(emb, Vocab(TOKENS), "word2vec")
    assert api.check_settings("bert", {"init_embeddings": "fasttext"})  # the form and the CLI say so too


def test_a_bert_run_can_start_from_glove(topic_corpus, tmp_path):
    from tests.conftest import tiny_spec

    spec = tiny_spec("bert", topic_corpus, tmp_path / "b", max_steps=2, init_embeddings="glove-6b-50d")
    events = list(api.train(spec))
    assert events[-1].status == "completed"
    assert events[0].info["init_embeddings"] == "glove-6b-50d" and events[0].info["init_embeddings_rows"] > 100
