"""A scene names a folder by its path; the views choose models by the name the engine gives what it loads: a
Hugging Face folder called "model" by its parent's name, a word2bert run by its own name, whatever it is (before,
a run folder called "model" was looked for under its parent's name and never found)."""

import shutil

from engine import api
from explorer.scenes import model_name


def test_a_scene_names_each_folder_as_the_engine_does(tmp_path, contextual_runs):
    import transformers

    from engine.data.text import load_subword_tokenizer

    ours = tmp_path / "experiment" / "model"
    shutil.copytree(contextual_runs["bert"][0], ours)
    theirs = tmp_path / "bert-small" / "model"
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=load_subword_tokenizer(ours / "tokenizer.json"), unk_token="[UNK]", cls_token="[CLS]",
        sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]")
    transformers.BertModel(transformers.BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1,
                                                   num_attention_heads=4, intermediate_size=64)).save_pretrained(theirs)
    tok.save_pretrained(theirs)
    for folder in (ours, theirs):
        assert model_name(str(folder)) == api.load(folder).name
    assert model_name(str(ours)) == "model" and model_name(str(theirs)) == "bert-small"
    assert model_name("bert-tiny") == "bert-tiny"  # a name is a name
