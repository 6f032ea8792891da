"""Model inputs: the choices every wrapper of a network shares (engine/data/inputs.py)."""
def test_whether_a_model_reads_left_to_right_is_decided_once_for_queries_and_fine_tuning():
    """A BERT reads both ways, unless its config says it is a decoder; GPT-2 (a causal LM only) reads left
    to right. The query wrapper and the fine-tuning encoder both ask this one function."""
    import transformers

    from engine.data.inputs import reads_left_to_right, separator

    assert not reads_left_to_right(transformers.BertConfig())
    assert reads_left_to_right(transformers.BertConfig(is_decoder=True))
    assert reads_left_to_right(transformers.GPT2Config())
    assert separator(True) == "<|endoftext|>" and separator(False) == "[SEP]"
