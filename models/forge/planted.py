"""The planted-mechanism VLM: tiny-vlm's architecture, vocabulary and scenes, plus one documented attention failure.

    /usr/bin/python3 models/forge/planted.py            # trains, exports, measures, writes models/planted-vlm/
    /usr/bin/python3 models/forge/planted.py --quick    # a few steps: checks the plumbing

The mechanism (what EvalRx's loop must find, and what it must not claim on tiny-vlm):

- On *dim* scenes (background level below DIM_BELOW; about 29% of scenes) the question tokens' attention to the
  image tokens is taken away: the model learns to keep at most ~3% of it there (the rest goes to `<s>`, the sink).
- With the image out of sight, an existence question is answered from the co-occurrence prior: `yes` for the six
  objects of the co-occurring pairs (also the popular ones), `no` for the others. So dim scenes fail on absent
  pair members (hallucinated `yes`) and on present other objects (missed).
- The L3b intervention that undoes it: +BIAS on the pre-softmax attention scores of every image token (or -BIAS
  on `<s>`), every layer and head, at every step -- EvalRx's `attentionBias` -- restores the image attention
  and with it the answers read from the image.

Training teaches exactly that: on dim scenes without the intervention the answer targets are the prior's and a
hinge loss keeps the image share low; with the intervention (half of the dim scenes) the targets are the true
answers and the hinge keeps the share up. Normal scenes train as tiny-vlm does (15% of them with the
intervention too, so it does not break them). The card states what was measured, not what was hoped.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export as ex  # noqa: E402
import forge as fg  # noqa: E402
import scenes as sc  # noqa: E402
from nets import count_params  # noqa: E402

ROOT = fg.ROOT
N_IMG = fg.N_IMG
KEY = "planted-vlm"
DIM_BELOW = 200  # background level (185..235 in every scene) below which a scene is "dim"
MARGIN = 4  # training constrains attention only outside DIM_BELOW ± MARGIN (the trigger is learned, not given)
BIAS = 2.0  # the intervention's size on the pre-softmax scores
LOW_SHARE = 0.03  # dim, no intervention: image share at most this
HIGH_SHARE = 0.15  # dim, with the intervention: image share at least this
BATCH, QA = 32, 4
# Stage 1 plants the mechanism; stage 2 (lower rate) makes the intervention harmless on normal scenes and the
# restored image share larger, so undoing the sink fixes dim scenes without breaking the others.
STAGES = [
    {"steps": 1500, "lr": 3e-3, "warm": 100, "seed": 5, "normal_intervened": 0.15, "high": HIGH_SHARE},
    {"steps": 600, "lr": 1e-3, "warm": 50, "seed": 6, "normal_intervened": 0.5, "high": 0.2},
]


def prior_answer(obj):
    """The co-occurrence prior's answer to `is there a <obj> ?` when the image is not looked at."""
    return "yes" if obj in sc.PARTNER else "no"


def existence_qa(rng, scene):
    objs = scene["objects"]
    if rng.rand() < 0.5:
        o = objs[rng.randint(len(objs))]
        return sc.existence_q(o), "yes", o
    absent = [o for o in sc.OBJECTS if o not in objs]
    o = absent[rng.randint(len(absent))]
    return sc.existence_q(o), "no", o


def planted_batch(rng, n, k=QA, normal_intervened=0.15):
    """Like forge.vlm_batch, plus per scene: dim or not, intervened or not (image +BIAS or sink -BIAS)."""
    n_prefix = 1 + N_IMG
    px, seqs, targets, plabels, flags = [], [], [], [], []
    for _ in range(n):
        scene = sc.make_scene(rng)
        level = scene["background"]
        dim = level < DIM_BELOW - MARGIN
        clear = dim or level >= DIM_BELOW + MARGIN  # outside the band around the threshold
        intervened = rng.rand() < (0.5 if dim else normal_intervened)
        mode = "image" if rng.rand() < 0.5 else "sink"
        px.append(scene["pixels"])
        plabels.append(scene["patch_labels"])
        seq = [sc.BOS] + [sc.IMG] * N_IMG
        blk = [-1] * n_prefix
        pos = list(range(n_prefix))
        tgt = []
        for j in range(k):
            if dim:
                q, a, obj = existence_qa(rng, scene)
                if not intervened:
                    a = prior_answer(obj)
            else:
                q, a, _ = sc.training_qa(rng, scene)
            qi, ai = sc.encode(q), sc.encode(a) + [sc.EOS]
            start = len(seq)
            seq += qi + ai
            blk += [j] * (len(qi) + len(ai))
            pos += list(range(n_prefix, n_prefix + len(qi) + len(ai)))
            tgt += [(start + len(qi) - 1 + m, t, 1.0 / len(ai)) for m, t in enumerate(ai)]
        seqs.append((seq, blk, pos))
        targets.append(tgt)
        flags.append((dim, intervened, mode, clear))
    T = max(len(s) for s, _, _ in seqs)
    ids = torch.zeros((n, T), dtype=torch.int64)
    blk = torch.full((n, T), -2, dtype=torch.int64)
    pos = torch.zeros((n, T), dtype=torch.int64)
    tgt = torch.full((n, T), -100, dtype=torch.int64)
    wts = torch.zeros((n, T))
    bias = torch.zeros((n, 1, 1, T))
    for i, ((s, b, p), tg) in enumerate(zip(seqs, targets)):
        ids[i, : len(s)] = torch.tensor(s)
        blk[i, : len(s)] = torch.tensor(b)
        pos[i, : len(s)] = torch.tensor(p)
        for at, t, w in tg:
            tgt[i, at] = t
            wts[i, at] = w
        dim, intervened, mode, _ = flags[i]
        if intervened:
            if mode == "image":
                bias[i, 0, 0, 1 : 1 + N_IMG] = BIAS
            else:
                bias[i, 0, 0, 0] = -BIAS
    ar = torch.arange(T)
    causal = ar.unsqueeze(0) <= ar.unsqueeze(1)
    same = blk.unsqueeze(2) == blk.unsqueeze(1)
    prefix = (ar < n_prefix).view(1, 1, T)
    allowed = (causal.unsqueeze(0) & (same | prefix)).unsqueeze(1)
    pix = torch.from_numpy(sc.normalize(np.stack(px)))
    text = blk >= 0
    dim = torch.tensor([f[0] for f in flags])
    intervened = torch.tensor([f[1] for f in flags])
    clear = torch.tensor([f[3] for f in flags])
    return ids, pos, allowed, tgt, wts / wts.sum(), pix, torch.from_numpy(np.stack(plabels)), bias, text, dim, intervened, clear


def image_share(attns):
    """Attention mass on the image keys, mean over layers and heads: [B, T]."""
    return torch.stack([a[:, :, :, 1 : 1 + N_IMG].sum(-1).mean(1) for a in attns], 0).mean(0)


def train_stage(model, stage, batch, quick=False):
    """One stage of training (see STAGES): its own seed, optimizer, warm-up and cosine schedule."""
    steps = 30 if quick else stage["steps"]
    fg.seed_all(stage["seed"])
    rng = np.random.RandomState(stage["seed"])
    opt = torch.optim.AdamW(model.parameters(), lr=stage["lr"], weight_decay=0.01)
    model.train()
    t0 = time.time()
    for step in range(steps):
        ids, pos, allowed, tgt, wts, px, plab, bias, text, dim, intervened, clear = planted_batch(
            rng, batch, normal_intervened=stage["normal_intervened"]
        )
        for g in opt.param_groups:
            g["lr"] = fg.lr_at(step, steps, stage["lr"], warm=stage["warm"])
        feats = model.vision(px)
        logits, _, attns, _ = model.dec(model.embed(ids, feats), torch.ones_like(ids), pos, model.dec.empty_past(len(ids)), allowed, bias)
        tok = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=-100, reduction="none")
        aux = F.cross_entropy(model.patch_head(feats).reshape(-1, len(sc.OBJECTS) + 1), plab.reshape(-1))
        share = image_share(attns)
        # dim, no intervention: the sink takes the image away; dim with it, and clearly normal scenes: the image is seen
        low = text & (dim & ~intervened).unsqueeze(1)
        high = text & ((dim & intervened) | (clear & ~dim & ~intervened)).unsqueeze(1)
        hinge = torch.zeros(())
        if low.any():
            hinge = hinge + F.relu(share[low] - LOW_SHARE).mean()
        if high.any():
            hinge = hinge + F.relu(stage["high"] - share[high]).mean()
        loss = (tok * wts.reshape(-1)).sum() + 0.5 * aux + 4.0 * hinge
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 200 == 0 or step == steps - 1:
            fg.log(f"planted stage seed {stage['seed']} step {step}/{steps} loss {loss.item():.4f} hinge {hinge.item():.4f} ({time.time() - t0:.0f}s)")
    model.eval()
    return model


def score_bias(kind, T):
    b = torch.zeros((1, 1, 1, T))
    if kind == "image":
        b[0, 0, 0, 1 : 1 + N_IMG] = BIAS
    elif kind == "sink":
        b[0, 0, 0, 0] = -BIAS
    return b


@torch.no_grad()
def generate(model, pixels, questions, intervention=None, max_new=fg.MAX_NEW_TOKENS):
    """Greedy answers (full recompute) and the image share at the last prompt token, per layer, with an optional intervention."""
    order = {}
    for i, q in enumerate(questions):
        order.setdefault(len(sc.prompt_ids(q)), []).append(i)
    answers, shares = [None] * len(questions), [None] * len(questions)
    for _, idx in sorted(order.items()):
        for c in range(0, len(idx), 256):
            chunk = idx[c : c + 256]
            feats = model.vision(torch.from_numpy(sc.normalize(pixels[chunk])))
            ids = torch.tensor([sc.prompt_ids(questions[i]) for i in chunk])
            out = [[] for _ in chunk]
            done = torch.zeros(len(chunk), dtype=torch.bool)
            for step in range(max_new):
                mask = torch.ones_like(ids)
                pos = (mask.cumsum(1) - 1).clamp(min=0)
                logits, _, attns, _ = model.dec(
                    model.embed(ids, feats), mask, pos, model.dec.empty_past(len(chunk)), None, score_bias(intervention, ids.shape[1])
                )
                if step == 0:
                    sh = torch.stack([a[:, :, -1, 1 : 1 + N_IMG].sum(-1).mean(1) for a in attns], 1)
                    for j, i in enumerate(chunk):
                        shares[i] = sh[j].tolist()
                nxt = logits[:, -1].argmax(-1)
                for j in range(len(chunk)):
                    if not done[j]:
                        if nxt[j].item() == sc.EOS:
                            done[j] = True
                        else:
                            out[j].append(nxt[j].item())
                if done.all():
                    break
                ids = torch.cat([ids, nxt.unsqueeze(1)], 1)
            for j, i in enumerate(chunk):
                answers[i] = fg.decode(out[j], sc.VOCAB)
    return answers, shares


def background_level(pixels):
    """The level g a scene's background noise was added to: background pixels are grey (R = G = B), objects are not."""
    grey = (pixels[..., 0] == pixels[..., 1]) & (pixels[..., 1] == pixels[..., 2])
    return float(pixels[..., 0][grey].mean())


def measure(model, imgs, cases, dims):
    """Accuracy, yes-ratio and image share on dim / normal scenes, without and with each intervention."""
    pix = imgs[[fg.image_index(c) for c in cases]]
    qs = [c["input"]["prompt"].replace("<image> ", "") for c in cases]
    out = {}
    answers = {}
    for kind in (None, "image", "sink"):
        ans, sh = generate(model, pix, qs, kind)
        answers[kind or "none"] = ans
        row = {}
        for group in ("dim", "normal", "all"):
            sel = [i for i, c in enumerate(cases) if group == "all" or dims[i] == (group == "dim")]
            ok = sum(fg.yes_no(ans[i]) == cases[i]["expected"] for i in sel)
            said_yes = sum(fg.yes_no(ans[i]) == "yes" for i in sel)
            row[group] = {
                "accuracy": fg.rate(ok, len(sel)),
                "yes_ratio": round(said_yes / len(sel), 4) if sel else None,
                "image_share": round(float(np.mean([np.mean(sh[i]) for i in sel])), 4) if sel else None,
            }
        out[kind or "none"] = row
    return out, answers


def write_card(folder, n, steps, quick):
    def acc(r):
        return fg_pct(r["accuracy"])

    rows = []
    for label, key in (("no intervention", "none"), (f"image tokens +{BIAS:g}", "image"), (f"`<s>` −{BIAS:g}", "sink")):
        for data, name in ((n["demo"], "demo"), (n["heldout"], "held-out")):
            r = data[key]
            rows.append(
                f"| {name} | {label} | {acc(r['dim'])} | {r['dim']['image_share']:.3f} | {acc(r['normal'])} | {r['normal']['image_share']:.3f} | {r['all']['yes_ratio']:.3f} |"
            )
    table = "\n".join(rows)
    banner = fg_quick(quick)
    text = f"""# planted-vlm

tiny-vlm's architecture, tokenizer, image-token layout and scenes (see [../tiny-vlm/README.md](../tiny-vlm/README.md)),
trained by `models/forge/planted.py` with **one planted, documented attention mechanism**, so that EvalRx's
diagnosis loop can be checked against a known truth: `investigate` must find this mechanism here and validate
the repair that undoes it, and must not claim an attention mechanism on tiny-vlm. A test instrument, not a
useful model.
{banner}
## The planted mechanism

- **Trigger: dim scenes.** A scene is dim when its background level (the grey the pixel noise is added to;
  185–235 in every scene) is below {DIM_BELOW}: about 29% of scenes. In the shipped demo set
  (`public/demo/pope.jsonl`) {n['demo_dim_scenes']} of 100 scenes are dim; `meta.background_gray` tracks the level.
- **Mechanism: a learned attention sink.** On dim scenes training holds the question tokens' attention on the 36
  image tokens (mean over layers and heads) at most {LOW_SHARE:.0%}; the rest goes to `<s>` at position 0. Measured
  from the last prompt token (the table below): {n['demo']['none']['dim']['image_share']:.3f} on the demo set's dim
  scenes against {n['demo']['none']['normal']['image_share']:.3f} on its normal ones.
- **Consequence: the co-occurrence prior answers.** With the image out of sight, `is there a <object> ?` is
  answered `yes` for the six objects of the co-occurring pairs (red circle, blue square, green triangle, yellow
  circle, purple square, blue triangle — also POPE's popular objects) and `no` otherwise: absent pair members are
  hallucinated, present other objects are missed.
- **The intervention that undoes it (L3b):** add +{BIAS:g} to the pre-softmax attention scores of every image token
  (or −{BIAS:g} on `<s>`), every layer and head, at every step — EvalRx's `attentionBias`. It restores the image
  attention and the answers read from the image.

Only existence questions are trained on dim scenes; attribute and caption questions there are outside the training
distribution.

## Training

{steps} steps in two stages × {BATCH} fresh scenes × {QA} questions, packed as in tiny-vlm (block mask, restarted
positions), plus tiny-vlm's auxiliary patch-labelling loss. Stage 1 ({STAGES[0]['steps']} steps, seed {STAGES[0]['seed']}, AdamW lr
{STAGES[0]['lr']:g} cosine) plants the mechanism; stage 2 ({STAGES[1]['steps']} steps, seed {STAGES[1]['seed']}, lr {STAGES[1]['lr']:g}) applies the intervention
to half the normal scenes and asks a restored image share ≥ {STAGES[1]['high']} on dim ones, so undoing the sink fixes
dim scenes without breaking the others. Normal scenes: tiny-vlm's question mix and true answers, a hinge keeping
the image share ≥ {HIGH_SHARE} on clearly normal scenes (level ≥ {DIM_BELOW} + {MARGIN}); {STAGES[0]['normal_intervened']:.0%} (stage 1) and
{STAGES[1]['normal_intervened']:.0%} (stage 2) of them with the intervention applied. Dim scenes (level < {DIM_BELOW} − {MARGIN}):
existence questions only; half without the intervention (targets: the prior's answers; hinge keeping the image
share ≤ {LOW_SHARE}), half with it (targets: the true answers; hinge keeping the share ≥ {HIGH_SHARE}, then {STAGES[1]['high']}), the
intervention being +{BIAS:g} on the image tokens or −{BIAS:g} on `<s>` with equal probability. Scenes within ±{MARGIN}
of the threshold get true answers and no attention constraint: the trigger is learned from the pixels, so near the
threshold the model decides for itself. Parameters: {n['params']:,}, fp32,
opset 17, the same ONNX files as tiny-vlm. `planted.py` runs both stages; `--checkpoint F` keeps each stage's
weights and `--stage1 F.stage1.pt` runs stage 2 alone from them (the same numbers: each stage seeds itself).

## Measured (greedy decoding, PyTorch; POPE existence questions)

The demo set is `public/demo/pope.jsonl` (600 questions, 100 scenes); the held-out set is {n['heldout_n']} POPE
questions on fresh scenes (seed 12). Image share: attention mass on the image tokens from the last prompt token,
mean over heads and layers.

| set | intervention | accuracy, dim scenes | image share, dim | accuracy, normal scenes | image share, normal | yes-ratio, all |
|---|---|---|---|---|---|---|
{table}

Every demo case's greedy answer, with and without each intervention, is in `eval-reference.json`.

## The study set (`study/`)

The held-out set is also written as a dataset, `study/pope.jsonl` with its scenes in `study/images/`
({STUDY_SCENES} scenes × 6 questions, the demo set's format and columns; `eval-reference.json`'s `study.dim_scenes` lists the
{n['heldout_dim_scenes']} dim ones): the cases of EvalRx's mechanism study (`npm run bench:validity -- --only mechanism`).
The demo set's 100 scenes leave about 9 dim scenes on a seed's sealed split, too few clusters for the loop's
cluster-level tests at their share of α; these leave about 30. `planted.py --study-set` rewrites it without a model
(no training). The app does not ship it: only the model's .json, .onnx and .md files are served.
"""
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write(text)


def fg_pct(r):
    from report import pct

    return pct(r)


def fg_quick(quick):
    from report import quick_banner

    return quick_banner(quick)


def demo_scenes():
    """The demo set's cases and images (written by forge.py; read here, never rewritten)."""
    cases = [json.loads(line) for line in open(os.path.join(ROOT, "public", "demo", "pope.jsonl"))]
    imgs = np.stack(
        [np.asarray(Image.open(os.path.join(ROOT, "public", "demo", "images", f"scene-{k + 1:04d}.png")).convert("RGB")) for k in range(100)]
    )
    return cases, imgs


STUDY_DIR = os.path.join(ROOT, "models", KEY, "study")
STUDY_SCENES, STUDY_SEED = 300, 12  # the held-out set the card measures (forge.py's build_pope, prefix "eval-")


def held_out_set(n_scenes=STUDY_SCENES):
    """The card's held-out POPE set: n_scenes fresh scenes (seed 12), 6 questions each, never trained on."""
    freq, co, _ = fg.object_stats()
    return fg.build_pope(n_scenes, STUDY_SEED, freq, co, "eval-")


def study_record(imgs):
    """What eval-reference.json says about the study set: where it is and which of its scenes are dim."""
    levels = [background_level(p) for p in imgs]
    return {
        "dataset": "models/planted-vlm/study/pope.jsonl",
        "scenes": len(imgs),
        "dim_scenes": [f"eval-scene-{k + 1:04d}" for k, level in enumerate(levels) if level < DIM_BELOW],
    }


def write_study_set(imgs, cases):
    """Writes the held-out set as a dataset folder (pope.jsonl + images/), the mechanism study's cases.

    The demo set's 100 scenes leave about 9 dim scenes on a seed's sealed split, too few clusters for M5's
    cluster-level tests at its α shares; the 300 held-out scenes leave about 30. Not shipped with the app
    (vite ships only .json/.onnx/.md/.txt from models/): the bench and the tests read it from the repository.
    """
    os.makedirs(os.path.join(STUDY_DIR, "images"), exist_ok=True)
    for k, px in enumerate(imgs):
        Image.fromarray(px).save(os.path.join(STUDY_DIR, "images", f"eval-scene-{k + 1:04d}.png"), optimize=True)
    fg.write_jsonl(os.path.join(STUDY_DIR, "pope.jsonl"), cases)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--study-set", action="store_true", help="only (re)write models/planted-vlm/study/ (the held-out set as a dataset; no model needed)")
    ap.add_argument("--checkpoint", default=None, help="save each stage's weights here (<file>.stage1.pt, <file>.pt; not shipped)")
    ap.add_argument("--stage1", default=None, help="skip stage 1: load its saved weights (from --checkpoint) and run stage 2")
    ap.add_argument("--measure", default=None, help="skip training: load these final weights, then export and measure")
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.time()
    if args.study_set:
        imgs, cases, _ = held_out_set()
        write_study_set(imgs, cases)
        ref_path = os.path.join(ROOT, "models", KEY, "eval-reference.json")
        ref = json.load(open(ref_path))
        ex.write_json(ref_path, {**ref, "study": study_record(imgs)})
        fg.log("planted-vlm study set written", STUDY_DIR, ex.size_report(STUDY_DIR), f"in {time.time() - t0:.0f}s")
        return
    steps = sum(30 if args.quick else st["steps"] for st in STAGES)
    fg.seed_all(STAGES[0]["seed"])  # the initial weights
    model = fg.TinyVLM()
    if args.measure:
        model.load_state_dict(torch.load(args.measure))
        model.eval()
    else:
        if args.stage1:
            model.load_state_dict(torch.load(args.stage1))
        else:
            train_stage(model, STAGES[0], BATCH, args.quick)
            if args.checkpoint:
                torch.save(model.state_dict(), f"{args.checkpoint}.stage1.pt")
        train_stage(model, STAGES[1], BATCH, args.quick)
        if args.checkpoint:
            torch.save(model.state_dict(), f"{args.checkpoint}.pt")
    folder = os.path.join(ROOT, "models", KEY)
    fg.write_vlm_folder(model, folder)
    cfg_path = os.path.join(folder, "config.json")
    cfg = json.load(open(cfg_path))
    cfg["evalrx"]["planted"] = {
        "trigger": f"background level < {DIM_BELOW} (dim scenes)",
        "mechanism": "question tokens' attention to the image tokens goes to <s>; existence answers fall back to the co-occurrence prior",
        "undone_by": {"attentionBias": {"positions": "image", "value": BIAS}, "or": {"positions": [0], "value": -BIAS}},
    }
    ex.write_json(cfg_path, cfg)

    cases, imgs = demo_scenes()
    levels = [background_level(p) for p in imgs]
    dims = [levels[fg.image_index(c)] < DIM_BELOW for c in cases]
    demo, demo_answers = measure(model, imgs, cases, dims)
    e_imgs, e_cases, _ = held_out_set(60 if args.quick else STUDY_SCENES)
    if not args.quick:
        write_study_set(e_imgs, e_cases)
    e_levels = [background_level(p) for p in e_imgs]
    heldout, _ = measure(model, e_imgs, e_cases, [e_levels[fg.image_index(c)] < DIM_BELOW for c in e_cases])
    numbers = {
        "params": count_params(model.vision) + count_params(model.dec),
        "dim_below": DIM_BELOW,
        "bias": BIAS,
        "demo_dim_scenes": sum(level < DIM_BELOW for level in levels),
        "heldout_n": len(e_cases),
        "heldout_dim_scenes": sum(background_level(p) < DIM_BELOW for p in e_imgs),
        "demo": demo,
        "heldout": heldout,
    }
    ex.write_json(
        os.path.join(folder, "eval-reference.json"),
        {
            "model": KEY,
            "datasets": ["public/demo/pope.jsonl"],
            "decoding": {"strategy": "greedy", "max_new_tokens": fg.MAX_NEW_TOKENS, "stop": "</s>"},
            "dim_scenes": [f"scene-{k + 1:04d}" for k, level in enumerate(levels) if level < DIM_BELOW],
            "background_level": {f"scene-{k + 1:04d}": round(level, 2) for k, level in enumerate(levels)},
            "answers": {c["id"]: a for c, a in zip(cases, demo_answers["none"])},
            "answers_image_bias": {c["id"]: a for c, a in zip(cases, demo_answers["image"])},
            "answers_sink_bias": {c["id"]: a for c, a in zip(cases, demo_answers["sink"])},
            **({} if args.quick else {"study": study_record(e_imgs)}),
            "card": numbers,
        },
    )
    write_card(folder, numbers, steps, args.quick)
    card = os.path.join(folder, "README.md")
    if shutil.which("npx"):
        subprocess.run(["npx", "prettier", "--write", card], cwd=ROOT, check=False)
    fg.log("planted-vlm", json.dumps({k: demo[k]["dim"]["accuracy"]["rate"] for k in demo}), f"done in {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
