"""A Hugging Face model's wrapper (``engine.models.wrappers.protocol.Adapter``), for the checkpoint
folders engine/handles/hf.py loads and for fine-tuning them: the decoder question (``reads_left_to_right``),
the special tokens and the maximum length are decided here once."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from engine.data.inputs import Specials, byte_level, hf_specials, reads_left_to_right, whole_texts
from engine.errors import Unsupported
from engine.models.packed_linear import pack_linears
from engine.models.wrappers.hf_lens import LensReader, find_lens_reader
from engine.models.wrappers.protocol import ForwardOutput, blocks_of
from engine.models.wrappers.readout import DirectReadout, hf_pre_norm_refusal


class HFAdapter:
    """A Hugging Face model behind the one wrapper: the model with its LM head for queries (or the bare
    network where the folder has none), its base model for fine-tuning."""

    def __init__(self, model: Any, tokenizer: Any, objective: str, device: torch.device, max_len: int,
                 missing_head_reason: str = "") -> None:
        self.model, self.device, self.objective = model.to(device).eval(), device, objective
        pack_linears(self.model)  # queries' short products through oneDNN on the CPU (see its module)
        self.hf_tokenizer = tokenizer
        backend = whole_texts(tokenizer.backend_tokenizer)
        self.tokenizer = backend
        self.max_len = max_len
        self.mask_id = tokenizer.mask_token_id
        # T5 has no [MASK]: a span of its text is replaced by a sentinel and the decoder writes the span out after it
        sentinel = tokenizer.convert_tokens_to_ids("<extra_id_0>") if self.mask_id is None else None
        self.sentinel: int | None = sentinel if objective == "masked" and isinstance(sentinel, int) and \
            sentinel != tokenizer.unk_token_id else None
        # what the decoder may write first that is not a word of the span: the end, padding, another sentinel (an
        # empty span); a fill lists the words, at the model's own probabilities
        self.not_words: list[int] = []
        if self.sentinel is not None:
            self.mask_id = self.sentinel
            self.not_words = sorted({int(i) for i in tokenizer.all_special_ids} | {
                int(i) for t, i in tokenizer.get_vocab().items() if re.fullmatch(r"<extra_id_\d+>", t)})
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.end_of_text: int | None = tokenizer.eos_token_id
        self.byte_level = byte_level(backend)
        self.metaspace = not self.byte_level and "Metaspace" in (repr(backend.pre_tokenizer) + repr(backend.decoder))
        self.has_nsp = hasattr(model, "cls") and hasattr(model.cls, "seq_relationship")
        self.missing_head_reason = missing_head_reason
        params = inspect.signature(model.forward).parameters
        self.takes_segments = "token_type_ids" in params and getattr(model.config, "type_vocab_size", 0) > 1
        config = model.config
        self.causal = objective == "causal" or reads_left_to_right(config)
        self.body: Any = model.base_model  # fine-tuning trains the network (a PreTrainedModel), not the LM head
        # an encoder-decoder's task model (BART-MNLI) or LM (BART, T5): its encoder gives vectors and attention, and
        # its words come from its decoder, so its encoder's layers are not read through the output head (an
        # encoder loaded alone is its own encoder)
        get_encoder = getattr(model, "get_encoder", None)
        encoder = get_encoder() if bool(getattr(config, "is_encoder_decoder", False)) and callable(get_encoder) \
            else None
        self.encoder_decoder = encoder is not None and encoder is not model
        if self.encoder_decoder:
            self.body = encoder
        self.hidden_size, self.n_layers = int(config.hidden_size), int(config.num_hidden_layers)
        self._lens: LensReader | None = None  # (read_layers: found on first use)
        self._lens_refused: str | None = None
        self.task_specials = hf_specials(tokenizer, config.model_type, self.causal, self.takes_segments)
        if self.causal or (tokenizer.cls_token_id is None and tokenizer.sep_token_id is None
                           and tokenizer.eos_token_id is None):
            bos = tokenizer.bos_token_id  # a language model's query: BOS, then the text (nothing after it)
            self.specials = Specials((bos,) if bos is not None else ())
        else:
            self.specials = hf_specials(tokenizer, config.model_type, False, self.takes_segments)

    def lm_head(self) -> Any:
        """The module that turns the network's last states into vocabulary logits where this model's class is
        known to do only that (BERT's prediction head; GPT-2's output layer, after its final norm, which the
        network applies): a query computes logits at the rows it reads and none for vectors or attention.
        None for other classes (they may scale or cap their logits): the whole model runs, as transformers has it."""
        if self.model is self.body:  # the bare network: no head
            return None
        head = getattr(self.model, "cls", None)
        if head is not None:
            return getattr(head, "predictions", None)  # (BERT's pre-training heads: the MLM one; not its NSP head)
        return getattr(self.model, "lm_head", None) if getattr(self.model.config, "model_type", "") == "gpt2" else None

    def forward(self, ids: torch.Tensor, segments: torch.Tensor | None, *, attention: bool = False,
                logits: bool = False, nsp: bool = False, positions: list[int] | None = None,
                pad_mask: torch.Tensor | None = None, row_positions: list[int] | None = None) -> ForwardOutput:
        mask = torch.ones_like(ids) if pad_mask is None else pad_mask.long()
        kwargs: dict[str, Any] = {"input_ids": ids, "output_hidden_states": True, "output_attentions": attention,
                                  "attention_mask": mask}
        if self.takes_segments and segments is not None:
            kwargs["token_type_ids"] = segments
        head = self.lm_head() if logits else None
        if self.sentinel is not None and logits:
            return self._span_start(ids, mask, attention, positions, row_positions)
        if not nsp and (head is not None or not logits):
            # the network alone: a masked LM's head on every position of an index build's batch of 32 x 128 tokens
            # is 500 MB of logits nobody reads, and as much work as the encoder's six layers
            body = self.body(**kwargs)
            lg = None
            if head is not None:
                last = body.last_hidden_state
                if row_positions is not None:
                    rows = torch.arange(len(row_positions), device=last.device)  # (indexes where the states are:
                    last = last[rows, torch.tensor(row_positions, device=last.device)]  # no copy, no sync) (B, d)
                elif positions is not None:
                    last = last[:, positions]
                lg = head(last)
            return ForwardOutput(list(body.hidden_states), list(body.attentions or []), lg, None)
        out = self.model(**kwargs)  # (an encoder-decoder's states and attention: its encoder's, as the body's)
        hidden = getattr(out, "hidden_states", None) or getattr(out, "encoder_hidden_states", None)
        attentions = getattr(out, "attentions", None) or getattr(out, "encoder_attentions", None)
        lg = getattr(out, "logits", None)
        if lg is None:
            lg = getattr(out, "prediction_logits", None)
        if lg is not None and positions is not None:
            lg = lg[:, positions]
        if lg is not None and row_positions is not None:
            lg = lg[torch.arange(len(row_positions), device=lg.device),
                    torch.tensor(row_positions, device=lg.device)]  # (B, V)
        return ForwardOutput(list(hidden or []), list(attentions or []), lg if logits else None,
                             getattr(out, "seq_relationship_logits", None) if nsp else None)

    def _span_start(self, ids: torch.Tensor, mask: torch.Tensor, attention: bool, positions: list[int] | None,
                    row_positions: list[int] | None) -> ForwardOutput:
        """T5's fill: the decoder, given its start and the sentinel, predicts the first token of the span the
        sentinel stands for — the logits at each text's one [MASK] (``positions``: one; ``row_positions``: one a
        row). The states and attention are its encoder's."""
        start = int(self.model.config.decoder_start_token_id or 0)
        decoder = torch.tensor([[start, self.sentinel]], device=ids.device).expand(ids.shape[0], 2)
        out = self.model(input_ids=ids, attention_mask=mask, decoder_input_ids=decoder, output_hidden_states=True,
                         output_attentions=attention)
        lg = out.logits[:, -1]  # (B, V)
        if row_positions is None:
            lg = lg[:, None].expand(lg.shape[0], len(positions or [0]), lg.shape[-1])  # (B, masks, V)
        return ForwardOutput(list(out.encoder_hidden_states), list(out.encoder_attentions or []), lg, None)

    def read_layers(self, states: list[torch.Tensor]) -> torch.Tensor:
        """The logit lens: every layer's state read as the output layer's is — through the final norm where the
        network has one (GPT-2's ln_f, Llama's norm, ModernBERT's final_norm) and the output head (BERT's
        prediction head, RoBERTa's lm_head, DistilBERT's or ELECTRA's transform and projector, a decoder's
        output embeddings). Which norm and head, and whether transformers' last state has passed the norm, is
        found once by a probe that must give back the model's own logits (``lens_reader``)."""
        return self.lens_reader()(torch.stack(states))  # (layers + 1, …, V)

    def direct_readout(self, name: str) -> DirectReadout:
        """The final norm and head a pre-LN network's heads write straight into (engine.models.wrappers.readout):
        the lens's, found by its probe; refused for a post-LN network or one not known to be pre-LN."""
        refusal = hf_pre_norm_refusal(name, self.model.config)
        if refusal is not None:
            raise refusal
        reader = self.lens_reader()
        return DirectReadout(reader.norm if reader.normed in ("last", "all") else None, reader.head)

    def lens_reader(self) -> LensReader:
        if self._lens is None:
            if self._lens_refused is not None:  # (found once: a refusal too, not probed again at every click)
                raise Unsupported(self._lens_refused)
            try:
                self._lens = find_lens_reader(self)
            except Unsupported as e:
                self._lens_refused = str(e)
                raise
        return self._lens

    def features(self, ids: torch.Tensor, segments: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        kwargs = {"input_ids": ids, "attention_mask": mask.long()}
        if self.takes_segments:
            kwargs["token_type_ids"] = segments
        return self.body(**kwargs).last_hidden_state

    def pooled(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """A decoder's last real token; an encoder's pooler where it has one, else its first token."""
        if self.causal:
            return states[torch.arange(states.shape[0], device=states.device), mask.sum(1) - 1]
        pooler = getattr(self.body, "pooler", None)
        if pooler is not None:
            return pooler(states)
        return states[:, 0]

    def lm_loss(self, states: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | None:
        return None

    def input_embedding(self) -> Any:
        return self.body.get_input_embeddings()

    def layer_modules(self) -> tuple[Any, list[Any]]:
        return self.body.get_input_embeddings(), blocks_of(self.body, self.n_layers)

    def reset(self) -> None:
        self.body.apply(self.body._init_weights)

    def files(self) -> dict[str, Callable[[Path], None]]:
        return {}  # the folder save_network writes rebuilds it

    def save_network(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.body.config.save_pretrained(folder)
        self.hf_tokenizer.save_pretrained(folder)
