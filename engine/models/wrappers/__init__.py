"""One wrapper per Transformer network, for queries and fine-tuning alike: ``Adapter`` (protocol.py).
Our BERT and GPT have theirs in ours.py, a Hugging Face model's is in hf.py."""
