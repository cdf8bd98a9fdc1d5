"""Model cards (README.md) written from the measured numbers -- nothing here is typed in by hand."""
import os


def pct(r):
    if r is None or r.get("rate") is None:
        return "n/a"
    lo, hi = r["wilson95"]
    return f"{100 * r['rate']:.1f}% ({r['k']}/{r['n']}; 95% CI {100 * lo:.1f}–{100 * hi:.1f})"


def share(s):
    return "n/a (no cases)" if not s["n"] else f"{s['mean']:.3f} (n={s['n']}; per layer {', '.join(f'{x:.3f}' for x in s['per_layer'])})"


def pope_table(m):
    rows = ["| split | accuracy | precision | recall | F1 | yes-ratio | false-positive rate |", "|---|---|---|---|---|---|---|"]
    for split in ("random", "popular", "adversarial", "all"):
        r = m[split]
        rows.append(
            f"| {split} | {pct(r['accuracy'])} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | {r['yes_ratio']:.3f} | {pct(r['false_positive_rate'])} |"
        )
    return "\n".join(rows)


def quick_banner(quick):
    return (
        "\n> **Plumbing build** (`--quick`): these weights are barely trained; the numbers below are real "
        "measurements of a near-random model. Re-run the forge without `--quick` for the bundled model.\n"
        if quick
        else ""
    )


def write_vlm_card(folder, cfg, n, steps, quick, sc, batch, per_image):
    g = sc.IMAGE_SIZE // sc.PATCH
    co = n["pope_heldout"]["co_occurrence_probes"]
    cod = n["pope_demo"]["co_occurrence_probes"]
    t = n["heldout_by_question_type"]
    pairs = ", ".join(f"{a} ↔ {b}" for a, b in sc.PAIRS)
    text = f"""# tiny-vlm

A tiny vision-language model in the transformers.js **LLaVA** layout, trained by
`models/forge/forge.py` on synthetic scenes so that EvalRx can demonstrate white-box
hallucination diagnosis with nothing downloaded. It is a test instrument, not a useful model.
{quick_banner(quick)}
## Architecture

- Vision encoder (`onnx/vision_encoder.onnx`): {sc.IMAGE_SIZE}×{sc.IMAGE_SIZE} RGB → conv stem of total stride {sc.PATCH}
  (3×3 conv 16 → 3×3/2 conv 32 → 3×3/2 conv 48 → 2×2/2 conv {cfg['dv']}, GELU between; one feature per {sc.PATCH}×{sc.PATCH}
  patch, receptive field 13 px) + learned position embeddings → {cfg['v_layers']} pre-LN ViT block(s) ({cfg['v_heads']} heads)
  → LayerNorm → projector Linear–GELU–Linear to the text width {cfg['d']}. Output `image_features` [batch, {g * g}, {cfg['d']}].
- Token embeddings (`onnx/embed_tokens.onnx`): `input_ids` int64 → `inputs_embeds`.
- Decoder (`onnx/decoder_model_merged.onnx`): Llama-style, {cfg['layers']} layers, hidden {cfg['d']}, {cfg['heads']} heads
  (head_dim {cfg['d'] // cfg['heads']}, no GQA: {cfg['heads']} KV heads), SwiGLU MLP {cfg['inter']}, RMSNorm, RoPE (θ = 10000),
  unfused attention (MatMul → scale → + mask → Softmax → MatMul). KV cache inputs `past_key_values.{{i}}.key/value`
  [batch, {cfg['heads']}, past, {cfg['d'] // cfg['heads']}], outputs `present.{{i}}.*`, plus `attentions.{{i}}` and `hidden_states.{{i}}`.
- `onnx/decoder_untapped.onnx`: the same decoder without the attention / hidden-state outputs.
- `onnx/lm_head.onnx`: final RMSNorm + unembedding, `hidden_states` → `logits` (the logit lens).
- Parameters: vision encoder {n['params']['vision_encoder']:,}, decoder (with embeddings and LM head)
  {n['params']['decoder']:,}, total **{n['params']['total']:,}**. All fp32, opset 17.
- Tokenizer: WordLevel over {len(sc.VOCAB)} tokens (lowercase; words and punctuation separated by spaces);
  specials `<pad>`=0, `<s>`=1, `</s>`=2, `<unk>`=3, `<image>`=4. BOS is prepended by the tokenizer.

## Image-token layout

The prompt is `<image> question`. The processor expands `<image>` into {g * g} copies, the tokenizer prepends
`<s>`, so the sequence is `<s>` at position 0, the image tokens at positions **1..{g * g}** (the {g}×{g} patch grid
in row-major order: position 1 + r·{g} + c is patch row r, column c, each covering {sc.PATCH}×{sc.PATCH} pixels),
then the question tokens, then the answer. Example: `<image> is there a red circle ?` → 42 prompt tokens;
the answer is `yes` or `no` followed by `</s>`.

## Training data

Scenes: {sc.IMAGE_SIZE}×{sc.IMAGE_SIZE} canvas, noisy light-grey background, 1–4 non-overlapping shapes
(sizes 12–18 px) from {len(sc.OBJECTS)} objects = 5 colours (red, green, blue, yellow, purple, ±18 jitter per channel)
× 3 shapes (circle, square, triangle). **Co-occurrence prior:** the pairs {pairs} bring their partner along with
probability {sc.CO_OCCURRENCE}; measured over 20,000 training scenes, a pair member's partner is present
{100 * n['training_co_occurrence_rate']:.1f}% of the time. Pair members are also drawn 3× more often, so they are
POPE's "popular" objects.

Training: {steps} steps × {batch} fresh scenes × {per_image} questions per scene, generated on the fly. The questions
about one scene are packed into one sequence after the shared `<s> <image>×{g * g}` prefix; a block mask lets each
question see only the prefix and itself and its positions restart after the prefix, so each is computed exactly as
the single prompt would be at inference. Question mix:
existence 60% (`is there a <colour> <shape> ?`, half yes, half a uniformly random absent object), attribute 20%
(`what colour is the <shape> ?` / `what shape is the <colour> object ?`; a caption when the scene has no unique
shape or colour), caption 20% (`describe the image .` → objects left to right: `a red circle , a blue square and
a green triangle .`). Loss: cross-entropy on answer tokens and `</s>`, each question weighted equally, plus
0.5 × an auxiliary patch-labelling loss (a linear head, not exported, names the object covering ≥ 12 pixels of each
patch from its image feature; it teaches the vision encoder to see within the CPU budget). AdamW, lr 3e-3,
100 warm-up steps then cosine, seed 1.

## Measured accuracy (held-out scenes, greedy decoding)

Training-distribution scenes (seed 13, prior included), exact match of the generated answer:

| question type | accuracy |
|---|---|
| existence, object present (yes) | {pct(t['existence_yes'])} |
| existence, random absent object (no) | {pct(t['existence_no'])} |
| attribute (colour / shape) | {pct(t['attribute'])} |
| caption (exact) | {pct(t['caption'])} |

Captions: CHAIR-i {pct(t['caption_chair']['chair_i'])}, CHAIR-s {pct(t['caption_chair']['chair_s'])}.

### POPE (held-out set, {n['pope_heldout']['all']['accuracy']['n']} questions, not shipped)

POPE scenes deliberately contain a pair member without its partner 60% of the time, both members 25%, no pair
member 15%. Per image and split: one present object (yes) and one absent object (no) chosen by POPE's rule:
random (uniform), popular (among the 3 most frequent absent objects), adversarial (the absent object that co-occurs
most with the present ones in training -- the missing partner when there is one).

{pope_table(n['pope_heldout'])}

### POPE (the shipped demo set `public/demo/pope.jsonl`, {n['pope_demo']['all']['accuracy']['n']} questions)

{pope_table(n['pope_demo'])}

Captions on the demo images (`public/demo/captions.jsonl`): exact {pct(n['pope_demo']['captions']['exact_match'])},
CHAIR-i {pct(n['pope_demo']['captions']['chair_i'])}, CHAIR-s {pct(n['pope_demo']['captions']['chair_s'])}.

## Hallucination on co-occurrence probes

A probe asks for the usual partner of a present object when the partner is absent (expected `no`).

- Held-out set: hallucination rate (answers `yes`) {pct(co['hallucination'])}.
- Demo set: {pct(cod['hallucination'])}.

Share of attention on image tokens from the answer query (the last prompt token), mean over heads and layers:

- held-out probes answered correctly: {share(co['image_attention_share_correct'])}
- held-out probes hallucinated: {share(co['image_attention_share_hallucinated'])}
- demo probes correct: {share(cod['image_attention_share_correct'])}
- demo probes hallucinated: {share(cod['image_attention_share_hallucinated'])}
- all demo questions answered correctly / wrongly: {share(n['pope_demo']['image_attention_share_all_correct'])} /
  {share(n['pope_demo']['image_attention_share_all_wrong'])}

These are measured, not designed: whether hallucinated answers look less at the image is whatever the numbers above say.
All numbers, plus every demo case's greedy answer and image-attention share, are in `eval-reference.json`.
"""
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write(text)


def write_lm_card(folder, cfg, n, steps, quick, batch):
    rows = "\n".join(f"| {k} | {pct(v)} |" for k, v in n["heldout_accuracy_by_length"].items())
    text = f"""# tiny-lm

A tiny text-only causal LM in the transformers.js decoder-only **llama** layout, trained by
`models/forge/forge.py` to reverse a sequence of digits. It has a known failure region: it was trained on
lengths {n['train_lengths'][0]}–{n['train_lengths'][1]} only, so longer inputs fail.
{quick_banner(quick)}
## Architecture

Llama-style decoder: {cfg['layers']} layers, hidden {cfg['d']}, {cfg['heads']} heads (head_dim {cfg['d'] // cfg['heads']}, 4 KV heads),
SwiGLU MLP {cfg['inter']}, RMSNorm, RoPE (θ = 10000), unfused attention. **{n['params']:,} parameters**, fp32, opset 17.

- `onnx/model.onnx`: `input_ids` int64, `attention_mask` int64, `position_ids` int64, `past_key_values.{{i}}.key/value`
  → `logits`, `present.{{i}}.key/value`, `attentions.{{i}}` [batch, heads, seq, total], `hidden_states.{{i}}` (i = 0 the
  embeddings, 1..{cfg['layers']} each layer's output before the final norm).
- `onnx/model_untapped.onnx`: the same without the extras. `onnx/lm_head.onnx`: final RMSNorm + unembedding.
- Tokenizer: WordLevel, 16 tokens (`<pad>` `<s>` `</s>` `<unk>` `reverse` `=` `0`..`9`), BOS prepended.

## Task and training data

Prompt `reverse 3 1 4 =`, answer `4 1 3` then `</s>`. Digits uniform, length uniform in
{n['train_lengths'][0]}..{n['train_lengths'][1]}, {steps} steps × {batch} sequences generated on the fly, loss on the answer only;
AdamW lr 3e-3 cosine, seed 2.

## Measured accuracy (exact match, greedy), held-out, 40 sequences per length

| length | accuracy |
|---|---|
{rows}

Demo set `public/demo/tiny-lm.jsonl` (208 cases, lengths 2–14, `meta.length` and distractor columns):
{pct(n['demo_accuracy'])}. Per-case greedy answers are in `eval-reference.json`.
"""
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write(text)
