"""Hugging Face checkpoint folders (BERT, RoBERTa, DistilBERT, ELECTRA, GPT-2, ...) through the same
TransformerHandle as our own models, built with ``transformers`` Auto classes, offline.

The head is chosen from the model type: a masked-LM head for encoders, a causal-LM head for
decoders, BertForPreTraining when the folder says so (adds next-sentence prediction). A folder whose
weights lack that head (e.g. a sentence-embedding model saved as a bare encoder) loads as the bare
encoder and says so: vectors and attention work, fill-mask explains why it cannot. So do a checkpoint whose
pre-training head is a discriminator (ELECTRA's: replaced tokens, no words) and an encoder-decoder (T5, BART: its
encoder is read). A checkpoint fine-tuned for a task (a classifier, tagger or question-answering model) answers
with its own head (engine.handles.hf_tasks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.data.inputs import reads_left_to_right
from engine.device import pick_device
from engine.errors import CheckpointError
from engine.handles.hf_tasks import WHAT, HFTaskHandle, labels_of, task_of
from engine.handles.transformer import TransformerHandle
from engine.models.hf_lock import one_thread_in_transformers
from engine.models.wrappers.hf import HFAdapter

WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")


@one_thread_in_transformers
def load_hf(folder: str | Path) -> TransformerHandle:
    import transformers
    from transformers import AutoConfig, AutoModel, AutoTokenizer
    from transformers.models.auto import modeling_auto as auto

    from engine.models.hf_memory import from_pretrained_in_memory
    from engine.models.shared_tokenizers import shared_tokenizer
    from engine.models.tokenizer_vocab import without_python_vocab

    folder = Path(folder)
    if not any((folder / f).exists() for f in WEIGHT_FILES):
        raise CheckpointError(f"{folder} looks like a Hugging Face checkpoint (config.json) but has no "
                              "model.safetensors or pytorch_model.bin weights")
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    try:
        config = AutoConfig.from_pretrained(folder, local_files_only=True)
        tokenizer = shared_tokenizer(folder, lambda: without_python_vocab(
            AutoTokenizer.from_pretrained(folder, local_files_only=True, use_fast=True)))
    except (OSError, ValueError, KeyError) as e:
        raise CheckpointError(f"{folder}: transformers cannot read this checkpoint ({e})") from None
    if not getattr(tokenizer, "is_fast", False):
        raise CheckpointError(f"{folder}: needs a fast tokenizer (tokenizer.json or a vocabulary transformers can convert)")
    model_type = config.model_type
    if model_type == "funnel":
        raise CheckpointError(f"{folder}: a Funnel Transformer pools its tokens between blocks, so its layers keep no "
                              "vector per token, which every view here reads; it cannot be opened")
    head: Any
    architectures = list(getattr(config, "architectures", None) or [])
    encoder_decoder = bool(getattr(config, "is_encoder_decoder", False))
    if encoder_decoder and getattr(config, "decoder_start_token_id", None) is None and config.pad_token_id is not None:
        config.decoder_start_token_id = config.pad_token_id  # T5's convention, which older T5 folders leave unsaid
    family = task_of(architectures, config)
    tasks = {"classify": ("MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES", "AutoModelForSequenceClassification"),
             "tag": ("MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING_NAMES", "AutoModelForTokenClassification"),
             "answer": ("MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES", "AutoModelForQuestionAnswering")}
    if family and model_type not in getattr(auto, tasks[family][0]):
        family = ""
    if family:  # fine-tuned for a task (BART-large-MNLI too): its own head answers (engine.handles.hf_tasks)
        objective, head = "none", getattr(transformers, tasks[family][1])
    elif encoder_decoder and model_type in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES:  # BART, mBART: pre-trained to
        objective, head = "masked", transformers.AutoModelForMaskedLM  # rewrite a text whose spans were masked
    elif encoder_decoder and SENTINEL in tokenizer.get_vocab() and \
            model_type in auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES:  # T5: pre-trained to write out what
        objective, head = "masked", transformers.AutoModelForSeq2SeqLM  # its sentinels stand for in a text
    elif encoder_decoder:  # the encoder is read (its vectors and attention); its decoder needs an output text
        objective, head = "none", None
    elif any(a.endswith("ForPreTraining") for a in architectures) and model_type in auto.MODEL_FOR_PRETRAINING_MAPPING_NAMES:
        objective, head = "masked", transformers.AutoModelForPreTraining
    elif reads_left_to_right(config) and model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        objective, head = "causal", transformers.AutoModelForCausalLM  # decided as fine-tuning decides it
    elif model_type in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        objective, head = "masked", transformers.AutoModelForMaskedLM
    else:
        objective, head = "none", None
    common = {"local_files_only": True, "attn_implementation": "eager", "config": config}
    reason = note = ""  # why a query is refused; what the library says of a model that answers otherwise
    try:
        model = None
        if head is not None:
            model, loading = from_pretrained_in_memory(head, folder, output_loading_info=True, **common)
            if loading.get("missing_keys"):
                family = ""  # (a task head whose weights are not there: no classifier either)
                what = "masked-LM" if objective == "masked" else "language-model"
                tuned = [a for a in architectures if "For" in a and not a.endswith(("ForMaskedLM", "ForPreTraining",
                                                                                   "ForCausalLM"))]
                held = f"its weights are a {tuned[0]}'s, a model fine-tuned for a task" if tuned else \
                    "its weights hold only the encoder"
                reason = (f"this checkpoint has no {what} head ({held}): it gives contextual vectors and attention, "
                          "not word predictions")
                objective, model = "none", None
            elif family:
                labels = f" ({', '.join(labels_of(config))})" if family != "answer" else ""
                reason = (f"this checkpoint was fine-tuned for a task: it {WHAT[family]}{labels}, under Fine-tune → "
                          "Try it, and predicts no words")
            elif model.get_output_embeddings() is None:  # ELECTRA's (or Funnel's) pre-training head: a discriminator
                reason = (f"this checkpoint's head ({type(model).__name__}) tells a text's original tokens from "
                          "replaced ones, as ELECTRA's discriminator does: it predicts no words; it gives contextual "
                          "vectors and attention")
                objective, model = "none", model.base_model
        if model is None:
            alone = next((a for a in architectures if a.endswith("EncoderModel") and hasattr(transformers, a)), "")
            model = from_pretrained_in_memory(getattr(transformers, alone) if alone else AutoModel, folder, **common)
            if alone and not reason:  # T5's encoder saved alone (sentence-T5, a diffusion model's text encoder)
                reason = (f"this checkpoint is an encoder-decoder's encoder saved alone ({alone}): it gives "
                          "contextual vectors and attention, not word predictions")
        if objective == "causal" and _sees_ahead(model):
            reason = (f"{model_type} reads the whole text at every position (XLNet predicts from permutations of "
                      "it, which a left-to-right query does not set up): it gives contextual vectors and attention, "
                      "not next-word predictions")
            objective, model = "none", model.base_model
        if encoder_decoder and objective == "masked":
            how = (f"its span-corruption pre-training taught it, its decoder writing out the span its sentinel "
                   f"{SENTINEL} stands for (the span's first token is shown; one [MASK] at a time)"
                   if tokenizer.mask_token_id is None else
                   "its denoising pre-training taught it, the decoder rewriting the text (as transformers' fill-mask "
                   "does)")
            note = (f"an encoder-decoder model ({model_type}): it fills [MASK] as {how}; "
                    "a model fine-tuned to summarize or translate fills it less well; its vectors and attention are "
                    "its encoder's, and its encoder's layers are not read through the output head (lens, tracing)")
        elif encoder_decoder and not family:
            model = model.get_encoder()
            reason = (f"an encoder-decoder model ({model_type}): its encoder's vectors and attention are shown here; "
                      "its decoder, which writes an output text, is not read, so it predicts no words")
    except (OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{folder}: the weights do not load ({e})") from None
    positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None) or 512
    if positions <= 0:  # XLNet's -1: relative positions, no table to run out of; a query reads what fine-tuning does
        positions = 512
    if model_type in ("roberta", "xlm-roberta", "camembert"):
        positions -= 2  # RoBERTa's position ids start after the padding index
    max_len = min(int(positions), int(tokenizer.model_max_length)) if tokenizer.model_max_length < 1e6 else int(positions)
    info = {"path": str(folder), "model_type": model_type, "architectures": architectures,
            "layers": config.num_hidden_layers, "heads": config.num_attention_heads, "dim": config.hidden_size,
            "parameters": sum(p.numel() for p in model.parameters()), "source": "Hugging Face checkpoint"}
    if (reason or note) and not family:  # (a task model's task is in its info already: the library says it once)
        info["note"] = reason or note
    adapter = HFAdapter(model, tokenizer, objective, pick_device(), max_len, reason)
    name = folder.name  # (engine.handles.load.load names it as loaded_name says)
    if family:
        return HFTaskHandle(f"hf-{model_type}", name, str(folder), info, adapter, family, labels_of(config))
    return TransformerHandle(f"hf-{model_type}", name, str(folder), info, adapter)


SENTINEL = "<extra_id_0>"  # T5's first sentinel: the span it stands for is what the decoder writes first


def _sees_ahead(model: Any) -> bool:
    """Whether a model transformers files as a causal LM lets a position see the tokens after it (XLNet without
    its permutation mask does): two texts that differ only in their last token must agree before it."""
    import torch

    vocab = int(model.config.vocab_size)
    first = [min(vocab - 1, i) for i in (5, 6, 7)]
    ids = torch.tensor([[*first, min(vocab - 1, 8)], [*first, min(vocab - 1, 9)]])
    try:
        with torch.inference_mode():
            states = model.base_model(input_ids=ids).last_hidden_state
    except (RuntimeError, ValueError, TypeError, AttributeError):  # a network this probe cannot run as is: the
        return False  # queries say what goes wrong, as for any model transformers files as causal
    return not torch.allclose(states[0, :3].float(), states[1, :3].float(), atol=1e-4)


def steps_text(config: dict) -> str:
    """"4,000 + 753 steps" for a run that started from an earlier one's weights (init_from), else "753 steps"."""
    steps = int(config.get("trained_steps", 0) or 0)
    earlier = int(config.get("init_from_steps", 0) or 0)
    return f"{earlier:,} + {steps:,} steps" if earlier else f"{steps:,} steps"


def load_mlm_head(run_dir: Path, config: dict) -> TransformerHandle:
    """A foreign encoder given a masked-LM head here (kind ``mlm-head``), or made a causal LM here (kind
    ``clm-head``): the base encoder's weights from its own folder, what was trained from the run folder
    (checked by name and shape)."""
    from engine.checkpoints.reading import read_tensors
    from engine.config.checks import config_from_dict
    from engine.models.masked_lm_head import base_folder, build_to_load, load_trained

    kind = str(config.get("kind"))  # the loader of both head families (engine.families)
    try:
        cfg = config_from_dict(kind, config["model"])
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{run_dir}: config.json's model settings are not an {kind}'s ({e})") from None
    causal = cfg.causal
    model, tokenizer, fresh = build_to_load(cfg.base, causal=causal)
    load_trained(model, read_tensors(run_dir, config), f"{run_dir} ({cfg.base})", fresh)
    model.eval()
    positions = int(getattr(model.config, "max_position_embeddings", 512))
    max_len = min(positions, int(tokenizer.model_max_length)) if tokenizer.model_max_length < 1e6 else positions
    trained = f"the head and the top {cfg.train_layers} layers" if cfg.train_layers else "the head"
    if causal:
        what = (f"{cfg.base} made a left-to-right language model (a GPT: causal attention, next-token head) by "
                f"word2bert ({trained} trained, {steps_text(config)} on {config.get('corpus', '?')})")
    else:
        what = (f"{cfg.base} with a masked-LM head trained by word2bert ({trained}, "
                f"{steps_text(config)} on {config.get('corpus', '?')})")
        if getattr(cfg, "sense_pairs", ""):
            pairs = config.get("sense_pairs_trained")
            what += (f"; its layer-{cfg.sense_layer or model.config.num_hidden_layers} word vectors also learned "
                     f"senses from {f'{pairs:,} ' if isinstance(pairs, int) else ''}word-in-context pairs "
                     f"({Path(cfg.sense_pairs).name})")
    averaged = config.get("averaged")
    if isinstance(averaged, list) and averaged:
        what += (f"; its weights are the mean of {len(averaged)} saves "
                 f"({', '.join(Path(str(a.get('path', '?'))).name for a in averaged if isinstance(a, dict))})")
    info = {"path": str(run_dir), "model_type": model.config.model_type, "base": cfg.base,
            "base_folder": str(base_folder(cfg.base)), "layers": model.config.num_hidden_layers,
            "heads": model.config.num_attention_heads, "dim": model.config.hidden_size,
            "parameters": sum(p.numel() for p in model.parameters()), "description": what,
            **{k: config[k] for k in ("corpus", "corpus_sources", "metrics", "trained_steps", "device", "averaged")
               if k in config},
            **({"sense_pairs": Path(cfg.sense_pairs).name} if getattr(cfg, "sense_pairs", "") else {})}
    adapter = HFAdapter(model, tokenizer, "causal" if causal else "masked", pick_device(), max_len)
    return TransformerHandle(f"hf-{model.config.model_type}", run_dir.name, str(run_dir), info, adapter)
