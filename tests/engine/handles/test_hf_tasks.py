"""A Hugging Face checkpoint fine-tuned for a task answers with its own head and labels, with transformers' numbers:
a sentiment or entailment classifier classifies a text or a pair, a named-entity tagger tags each word (at its first
token); a regression head is no classifier. Before, such folders opened as bare encoders ("no masked-LM head")."""

import numpy as np
import pytest
import torch

from engine import api
from engine.errors import Unsupported
from engine.results import Capability


@pytest.fixture(scope="module")
def hf_tokenizer(contextual_runs):
    import transformers

    from engine.data.text import load_subword_tokenizer

    tok = load_subword_tokenizer(contextual_runs["bert"][0] / "tokenizer.json")
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", cls_token="[CLS]",
                                                sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]")


def _folder(path, model, tokenizer):
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _config(tokenizer, **kw):
    import transformers

    return transformers.BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                   intermediate_size=64, **kw)


def test_a_sentence_classifier_gives_its_labels_with_transformers_probabilities(tmp_path, hf_tokenizer):
    import transformers

    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(_config(
        hf_tokenizer, num_labels=3, id2label={0: "entailment", 1: "neutral", 2: "contradiction"},
        label2id={"entailment": 0, "neutral": 1, "contradiction": 2})).eval()
    h = api.load(_folder(tmp_path / "nli", model, hf_tokenizer))  # (ours where pick_device puts it; theirs on the CPU)
    assert Capability.CLASSIFY in h.capabilities and Capability.MASKED_LM not in h.capabilities
    assert "entailment, neutral, contradiction" in h.info["task"]
    for a, b in (("the cat sat on the mat", None), ("the cat sat", "a cat is sitting")):
        ours = h.classify(a, b)
        with torch.no_grad():
            theirs = model(**hf_tokenizer(a, b, return_tensors="pt")).logits[0].softmax(-1).cpu().numpy()
        assert sorted(ours.labels) == ["contradiction", "entailment", "neutral"]
        got = np.array([ours.probs[ours.labels.index(label)] for label in ("entailment", "neutral", "contradiction")])
        assert np.allclose(got, theirs, atol=1e-4)  # (eager attention and packed products here: float noise)
        assert list(ours.probs) == sorted(ours.probs, reverse=True)  # the likeliest first
    assert h.contextual_vectors("the cat sat").vectors.shape == (3, 3, 32)  # its encoder, as any model's
    with pytest.raises(Unsupported, match="classifies texts"):
        h.fill_mask("the [MASK] sat")
    with pytest.raises(Unsupported, match="classifies texts"):
        h.tag("the cat sat")


def test_a_multi_label_classifier_reads_each_label_on_its_own(tmp_path, hf_tokenizer):
    import transformers

    torch.manual_seed(1)
    model = transformers.BertForSequenceClassification(_config(
        hf_tokenizer, num_labels=3, problem_type="multi_label_classification")).eval()
    h = api.load(_folder(tmp_path / "multi", model, hf_tokenizer))
    ours = h.classify("the cat sat on the mat")
    with torch.no_grad():
        theirs = model(**hf_tokenizer("the cat sat on the mat", return_tensors="pt")).logits[0].sigmoid().cpu().numpy()
    assert np.allclose(sorted(ours.probs), sorted(theirs), atol=1e-4) and ours.labels[0].startswith("LABEL_")


def test_a_tagger_tags_each_word_at_its_first_token(tmp_path, hf_tokenizer):
    import transformers

    labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    torch.manual_seed(2)
    model = transformers.BertForTokenClassification(_config(
        hf_tokenizer, num_labels=5, id2label=dict(enumerate(labels)), label2id={t: i for i, t in enumerate(labels)}))
    model.eval()
    h = api.load(_folder(tmp_path / "ner", model, hf_tokenizer))
    assert Capability.TAG in h.capabilities and Capability.CLASSIFY not in h.capabilities
    text = "the cat sat on the mat in paris"
    ours = h.tag(text)
    assert ours.words == tuple(text.split())
    enc = hf_tokenizer(text.split(), is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        probs = model(**enc).logits[0].softmax(-1).cpu().numpy()
    firsts = [enc.word_ids().index(i) for i in range(len(ours.words))]
    assert list(ours.tags) == [labels[int(probs[t].argmax())] for t in firsts]
    assert np.allclose(ours.probs, [probs[t].max() for t in firsts], atol=1e-4)


def test_a_regression_head_is_not_a_classifier(tmp_path, hf_tokenizer):
    import transformers

    model = transformers.BertForSequenceClassification(_config(hf_tokenizer, num_labels=1))
    h = api.load(_folder(tmp_path / "sts", model, hf_tokenizer))
    assert not h.capabilities & (Capability.CLASSIFY | Capability.TAG)
    with pytest.raises(Unsupported, match="not a fine-tuned classifier"):
        h.classify("the cat sat")
    assert "BertForSequenceClassification" in h.missing(Capability.MASKED_LM)  # what it is, said where it is opened


def test_a_question_answering_model_answers_with_a_span_of_the_context(tmp_path, hf_tokenizer):
    import transformers

    from engine.finetune.metrics import best_span

    torch.manual_seed(3)
    model = transformers.BertForQuestionAnswering(_config(hf_tokenizer)).eval()
    h = api.load(_folder(tmp_path / "squad", model, hf_tokenizer))
    assert Capability.ANSWER in h.capabilities and "answers a question" in h.info["task"]
    question, context = "where did the cat sit", "the cat sat on the mat in the sun"
    ours = h.answer(question, context)
    enc = hf_tokenizer(question, context, return_tensors="pt", return_offsets_mapping=True)
    offsets = enc.pop("offset_mapping")[0].tolist()
    sequence = enc.sequence_ids(0)  # None for [CLS] and [SEP], 0 for the question, 1 for the context
    segments = torch.tensor([[0 if i is None or i == 0 else 1 for i in sequence]])
    segments[0, -1] = 1  # BERT's last [SEP] belongs to the second segment
    with torch.no_grad():
        out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], token_type_ids=segments)
    context_tokens = np.array([i == 1 for i in sequence])
    s, e, score = best_span(out.start_logits[0].cpu().numpy(), out.end_logits[0].cpu().numpy(), context_tokens)
    assert (ours.start, ours.end) == (offsets[s][0], offsets[e][1]) and ours.text == context[ours.start:ours.end]
    assert ours.text and abs(ours.score - score) < 1e-3
    with pytest.raises(Unsupported, match=r"answers a question from a context$"):  # (no start/end "labels")
        h.classify("the cat sat")


@pytest.mark.parametrize("no_answer", [True, False])
def test_a_squad2_no_answer_is_said_when_the_first_token_outscores_every_span(tmp_path, hf_tokenizer, no_answer):
    """A model trained on SQuAD 2.0 answers "no answer" with the span of [CLS]: Try it says so beside the best span
    when that score is higher (transformers' pipeline with handle_impossible_answer), and says nothing when not."""
    import transformers

    torch.manual_seed(5)
    model = transformers.BertForQuestionAnswering(_config(hf_tokenizer)).eval()
    question, context = "where did the cat sit", "the cat sat on the mat in the sun"
    enc = hf_tokenizer(question, context, return_tensors="pt")
    with torch.no_grad():  # a head that reads [CLS]'s last state (or its opposite) as both start and end
        states = model.bert(**enc).last_hidden_state[0]
        direction = (states[0] - states[1:].mean(0)) * (1 if no_answer else -1)
        model.qa_outputs.weight.copy_(torch.stack([direction, direction]) * 10)
        model.qa_outputs.bias.zero_()
        out = model(**enc)
    null = float(out.start_logits[0, 0] + out.end_logits[0, 0])
    assert (null > float(out.start_logits[0, 1:].max() + out.end_logits[0, 1:].max())) == no_answer  # as meant
    ours = api.load(_folder(tmp_path / "squad2", model, hf_tokenizer)).answer(question, context)
    assert ours.text  # the best span is still given
    assert ("no answer" in ours.notice) == no_answer
