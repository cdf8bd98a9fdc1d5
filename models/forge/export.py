"""ONNX export and the transformers.js folder files (config, tokenizer, processor)."""
import json
import os

import onnx
import torch
import torch.nn as nn

OPSET = 17


class DecoderExport(nn.Module):
    """Flat-argument wrapper: (x, attention_mask, position_ids, *past) -> (logits, *present, [*attentions, *hidden_states])."""

    def __init__(self, dec, tapped, embed_inside):
        super().__init__()
        self.dec = dec
        self.tapped = tapped
        self.embed_inside = embed_inside

    def forward(self, x, attention_mask, position_ids, *past):
        if self.embed_inside:
            x = self.dec.embed_tokens(x)
        pairs = [(past[2 * i], past[2 * i + 1]) for i in range(self.dec.n_layers)]
        logits, presents, attns, hiddens = self.dec(x, attention_mask, position_ids, pairs)
        out = [logits]
        for k, v in presents:
            out += [k, v]
        if self.tapped:
            out += attns + hiddens
        return tuple(out)


class EmbedExport(nn.Module):
    def __init__(self, dec):
        super().__init__()
        self.dec = dec

    def forward(self, input_ids):
        return self.dec.embed_tokens(input_ids)


class HeadExport(nn.Module):
    def __init__(self, dec):
        super().__init__()
        self.dec = dec

    def forward(self, hidden_states):
        return self.dec.head(hidden_states)


def _save(model, args, path, input_names, output_names, dynamic_axes, fixed=None):
    model.eval()
    with torch.no_grad():
        torch.onnx.export(
            model,
            args,
            path,
            input_names=input_names,
            output_names=output_names,
            dynamic_axes=dynamic_axes,
            opset_version=OPSET,
            do_constant_folding=True,
        )
    m = onnx.load(path)
    onnx.checker.check_model(m)
    assert m.ir_version == 8, f"{path}: ir_version {m.ir_version}, expected 8"
    # No metadata that changes from run to run: keeps the files byte-identical across forge runs.
    # The exporter loses some static dims (it names them e.g. "Softmaxattentions.0_dim_1"): declare them.
    for out in m.graph.output:
        for axis, value in (fixed or {}).get(out.name, {}).items():
            dim = out.type.tensor_type.shape.dim[axis]
            dim.ClearField("dim_param")
            dim.dim_value = value
    m.producer_name = "evalrx-forge"
    m.producer_version = "1"
    onnx.save(m, path)


def export_decoder(dec, path, tapped, embed_inside):
    """The merged decoder: traced with a non-zero past so Concat and the mask export generically."""
    L = dec.n_layers
    b, s, past_len = 2, 3, 4
    if embed_inside:
        x = torch.randint(4, dec.vocab, (b, s), dtype=torch.int64)
        first = "input_ids"
    else:
        x = torch.randn(b, s, dec.d)
        first = "inputs_embeds"
    mask = torch.ones(b, past_len + s, dtype=torch.int64)
    pos = torch.arange(past_len, past_len + s, dtype=torch.int64).unsqueeze(0).repeat(b, 1)
    past = []
    for _ in range(L):
        past += [torch.randn(b, dec.heads, past_len, dec.head_dim), torch.randn(b, dec.heads, past_len, dec.head_dim)]
    in_names = [first, "attention_mask", "position_ids"]
    axes = {
        first: {0: "batch_size", 1: "sequence_length"},
        "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
        "position_ids": {0: "batch_size", 1: "sequence_length"},
        "logits": {0: "batch_size", 1: "sequence_length"},
    }
    out_names = ["logits"]
    for i in range(L):
        for kv in ("key", "value"):
            n = f"past_key_values.{i}.{kv}"
            in_names.append(n)
            axes[n] = {0: "batch_size", 2: "past_sequence_length"}
            n = f"present.{i}.{kv}"
            out_names.append(n)
            axes[n] = {0: "batch_size", 2: "total_sequence_length"}
    if tapped:
        for i in range(L):
            out_names.append(f"attentions.{i}")
            axes[f"attentions.{i}"] = {0: "batch_size", 2: "sequence_length", 3: "total_sequence_length"}
        for i in range(L + 1):
            out_names.append(f"hidden_states.{i}")
            axes[f"hidden_states.{i}"] = {0: "batch_size", 1: "sequence_length"}
    fixed = {f"attentions.{i}": {1: dec.heads} for i in range(L)}
    _save(DecoderExport(dec, tapped, embed_inside), (x, mask, pos, *past), path, in_names, out_names, axes, fixed)


def export_embed(dec, path):
    ids = torch.randint(0, dec.vocab, (2, 3), dtype=torch.int64)
    axes = {"input_ids": {0: "batch_size", 1: "sequence_length"}, "inputs_embeds": {0: "batch_size", 1: "sequence_length"}}
    _save(EmbedExport(dec), (ids,), path, ["input_ids"], ["inputs_embeds"], axes)


def export_head(dec, path):
    h = torch.randn(2, 3, dec.d)
    axes = {"hidden_states": {0: "batch_size", 1: "sequence_length"}, "logits": {0: "batch_size", 1: "sequence_length"}}
    _save(HeadExport(dec), (h,), path, ["hidden_states"], ["logits"], axes)


def export_vision(vision, path, image_size):
    px = torch.randn(2, 3, image_size, image_size)
    axes = {"pixel_values": {0: "batch_size"}, "image_features": {0: "batch_size"}}
    n = vision.grid * vision.grid
    _save(vision, (px,), path, ["pixel_values"], ["image_features"], axes, {"image_features": {1: n}})


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def tokenizer_json(vocab, specials, bos="<s>"):
    """A `tokenizers`-format WordLevel tokenizer: lowercase, split on whitespace and punctuation, BOS prepended."""
    added = [
        {"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
        for t in specials
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [
                {"SpecialToken": {"id": bos, "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": bos, "type_id": 1}},
                {"Sequence": {"id": "B", "type_id": 1}},
            ],
            "special_tokens": {bos: {"id": bos, "ids": [vocab[bos]], "tokens": [bos]}},
        },
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"},
    }


def tokenizer_config(max_len, extra=None):
    cfg = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "pad_token": "<pad>",
        "padding_side": "left",
        "model_max_length": max_len,
        "clean_up_tokenization_spaces": False,
    }
    cfg.update(extra or {})
    return cfg


def text_config(dec, max_pos):
    return {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "vocab_size": dec.vocab,
        "hidden_size": dec.d,
        "intermediate_size": dec.inter,
        "num_hidden_layers": dec.n_layers,
        "num_attention_heads": dec.heads,
        "num_key_value_heads": dec.heads,
        "head_dim": dec.head_dim,
        "hidden_act": "silu",
        "max_position_embeddings": max_pos,
        "rms_norm_eps": 1e-5,
        "rope_theta": dec.rope_theta,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "pad_token_id": 0,
        "torch_dtype": "float32",
    }


def size_report(folder):
    total = 0
    for root, _, files in os.walk(folder):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
    return total
