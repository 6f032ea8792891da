"""A BERT tokenizer without transformers' Python copy of its vocabulary answers exactly as the whole one: the copy
(30,522 strs and ints for MiniLM's) is gone, and every use the app makes of a tokenizer gives the same result."""

def _tokenizers():
    from transformers import AutoTokenizer

    from engine.models.masked_lm_head import base_folder
    from engine.models.tokenizer_vocab import without_python_vocab

    folder = base_folder("all-minilm-l6-v2")
    whole = AutoTokenizer.from_pretrained(folder, local_files_only=True, use_fast=True)
    slim = without_python_vocab(AutoTokenizer.from_pretrained(folder, local_files_only=True, use_fast=True))
    return whole, slim


def test_a_slim_tokenizer_answers_as_the_whole_one(tmp_path):
    whole, slim = _tokenizers()
    assert type(whole).__name__ == "BertTokenizer" and isinstance(whole._vocab, dict) and len(whole._vocab) == 30_522
    assert slim._vocab is None  # the copy is gone…
    text, pair = "The bank by the river flooded; Zürich's banks didn't.", "A [MASK] of money."
    for a, b in ((whole(text, pair, return_offsets_mapping=True)), (slim(text, pair, return_offsets_mapping=True))),:
        assert dict(a) == dict(b)
    ids = whole(text)["input_ids"]
    assert slim.convert_ids_to_tokens(ids) == whole.convert_ids_to_tokens(ids)
    assert slim.convert_tokens_to_ids(["bank", "##s", "[MASK]", "zzzz"]) == whole.convert_tokens_to_ids(
        ["bank", "##s", "[MASK]", "zzzz"])
    assert slim.decode(ids) == whole.decode(ids) and slim.get_vocab() == whole.get_vocab()
    assert len(slim) == len(whole) and slim.mask_token_id == whole.mask_token_id
    slim.bos_token = whole.bos_token = whole.cls_token  # (as the causal LM head sets it)
    assert slim("a text")["input_ids"] == whole("a text")["input_ids"]
    slim.save_pretrained(tmp_path)  # … and it can still be written, as a folder transformers reads
    from transformers import AutoTokenizer

    again = AutoTokenizer.from_pretrained(tmp_path, local_files_only=True)
    assert again(text)["input_ids"] == ids


def test_the_apps_loads_keep_no_copy():
    from engine import api

    for name in ("all-minilm-l6-v2", "minilm-mlm"):  # a Hugging Face folder, and a masked LM made here on one
        tokenizer = api.load(name).adapter.hf_tokenizer
        assert type(tokenizer).__name__ == "BertTokenizer" and tokenizer._vocab is None, name
