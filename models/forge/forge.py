"""The forge: trains, exports and measures EvalRx's bundled models, deterministically.

    /usr/bin/python3 models/forge/forge.py            # full run (fits in 15 min on 2 cores)
    /usr/bin/python3 models/forge/forge.py --quick    # a few steps: checks the plumbing

Writes models/tiny-vlm/, models/tiny-lm/ (ONNX + config + tokenizer + model card +
eval-reference.json) and public/demo/ (pope.jsonl, captions.jsonl, tiny-lm.jsonl, images/).
"""
import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export as ex  # noqa: E402
import lmtask  # noqa: E402
import scenes as sc  # noqa: E402
from nets import Decoder, VisionEncoder, count_params  # noqa: E402
from report import write_lm_card, write_vlm_card  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
N_IMG = (sc.IMAGE_SIZE // sc.PATCH) ** 2
MAX_NEW_TOKENS = 24

VLM = dict(d=64, layers=2, heads=4, inter=192, dv=64, v_layers=1, v_heads=4)
LM = dict(d=64, layers=2, heads=4, inter=128)
QA_PER_IMAGE = 4
VLM_STEPS, VLM_BATCH = 1200, 32
LM_STEPS, LM_BATCH = 1000, 64


def log(*a):
    print(f"[{time.strftime('%H:%M:%S')}]", *a, flush=True)


def seed_all(seed):
    torch.manual_seed(seed)
    np.random.seed(seed)


def lr_at(step, steps, base, warm=100):
    if step < warm:
        return base * (step + 1) / warm
    return base * 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, steps - warm)))


# ----------------------------------------------------------------------------- VLM


class TinyVLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.vision = VisionEncoder(sc.IMAGE_SIZE, sc.PATCH, VLM["dv"], VLM["v_heads"], VLM["v_layers"], VLM["d"])
        self.dec = Decoder(len(sc.VOCAB), VLM["d"], VLM["layers"], VLM["heads"], VLM["inter"])
        # training only (not exported): names the object under each patch from its image feature, which
        # teaches the vision encoder to see far faster than the answer loss alone
        self.patch_head = torch.nn.Linear(VLM["d"], len(sc.OBJECTS) + 1)

    def embed(self, ids, feats):
        """Token embeddings with the image-token rows replaced by the image features (llava's merge)."""
        # our prompts always hold the image tokens at positions 1..N_IMG (after <s>); a generated <image> token
        # (an untrained model can emit one) is embedded as a token, as transformers.js does after the first step
        assert bool((ids[:, 1 : 1 + N_IMG] == sc.IMG).all())
        emb = self.dec.embed_tokens(ids)
        return torch.cat([emb[:, :1], feats, emb[:, 1 + N_IMG :]], dim=1)

    def forward(self, ids, feats, mask, pos=None, allowed=None):
        b, s = ids.shape
        if pos is None:
            pos = (mask.cumsum(1) - 1).clamp(min=0)
        return self.dec(self.embed(ids, feats), mask, pos, self.dec.empty_past(b), allowed)


def vlm_batch(rng, n, k=QA_PER_IMAGE):
    """n scenes, k questions each, packed as <s> <image>x36 q1 a1 </s> q2 a2 </s> ...

    Each question block sees the shared prefix and itself only, and its positions restart after the
    prefix, so a block is computed exactly as the single prompt `<image> q` would be at inference.
    """
    n_prefix = 1 + N_IMG
    px, seqs, blocks, targets, plabels = [], [], [], [], []
    for _ in range(n):
        scene = sc.make_scene(rng)
        px.append(scene["pixels"])
        plabels.append(scene["patch_labels"])
        seq = [sc.BOS] + [sc.IMG] * N_IMG
        blk = [-1] * n_prefix
        pos = list(range(n_prefix))
        tgt = []
        for j in range(k):
            q, a, _ = sc.training_qa(rng, scene)
            qi, ai = sc.encode(q), sc.encode(a) + [sc.EOS]
            start = len(seq)
            seq += qi + ai
            blk += [j] * (len(qi) + len(ai))
            pos += list(range(n_prefix, n_prefix + len(qi) + len(ai)))
            # the logits at position p predict token p + 1: supervise the answer and EOS
            # each question weighs the same whatever its answer's length
            tgt += [(start + len(qi) - 1 + m, t, 1.0 / len(ai)) for m, t in enumerate(ai)]
        seqs.append((seq, blk, pos))
        targets.append(tgt)
    T = max(len(s) for s, _, _ in seqs)
    ids = torch.zeros((n, T), dtype=torch.int64)
    blk = torch.full((n, T), -2, dtype=torch.int64)
    pos = torch.zeros((n, T), dtype=torch.int64)
    tgt = torch.full((n, T), -100, dtype=torch.int64)
    wts = torch.zeros((n, T))
    for i, ((s, b, p), tg) in enumerate(zip(seqs, targets)):
        ids[i, : len(s)] = torch.tensor(s)
        blk[i, : len(s)] = torch.tensor(b)
        pos[i, : len(s)] = torch.tensor(p)
        for at, t, w in tg:
            tgt[i, at] = t
            wts[i, at] = w
    ar = torch.arange(T)
    causal = ar.unsqueeze(0) <= ar.unsqueeze(1)
    same = blk.unsqueeze(2) == blk.unsqueeze(1)
    prefix = (ar < n_prefix).view(1, 1, T)
    allowed = (causal.unsqueeze(0) & (same | prefix)).unsqueeze(1)
    pix = torch.from_numpy(sc.normalize(np.stack(px)))
    return ids, pos, allowed, tgt, wts / wts.sum(), pix, torch.from_numpy(np.stack(plabels))


def pad_batch(seqs, starts):
    T = max(map(len, seqs))
    ids = torch.full((len(seqs), T), 0, dtype=torch.int64)
    mask = torch.zeros((len(seqs), T), dtype=torch.int64)
    tgt = torch.full((len(seqs), T), -100, dtype=torch.int64)
    for i, (s, st) in enumerate(zip(seqs, starts)):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
        # logits at position t predict token t+1: supervise the answer tokens and EOS only
        tgt[i, st - 1 : len(s) - 1] = torch.tensor(s[st:])
    return ids, mask, tgt


def train_vlm(steps, batch, seed=1):
    seed_all(seed)
    model = TinyVLM()
    rng = np.random.RandomState(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    t0 = time.time()
    for step in range(steps):
        ids, pos, allowed, tgt, wts, px, plab = vlm_batch(rng, batch)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, 3e-3)
        feats = model.vision(px)
        logits = model(ids, feats, torch.ones_like(ids), pos, allowed)[0]
        tok = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=-100, reduction="none")
        aux = F.cross_entropy(model.patch_head(feats).reshape(-1, len(sc.OBJECTS) + 1), plab.reshape(-1))
        loss = (tok * wts.reshape(-1)).sum() + 0.5 * aux
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 200 == 0 or step == steps - 1:
            log(f"vlm step {step}/{steps} loss {loss.item():.4f} patch-aux {aux.item():.4f} ({time.time() - t0:.0f}s)")
    model.eval()
    return model


@torch.no_grad()
def vlm_generate(model, pixels, questions, max_new=MAX_NEW_TOKENS):
    """Greedy answers (full recompute, batch grouped by prompt length), plus the image-attention share.

    share[i] = attention mass on the image tokens from the query that emits the first answer token
    (the last prompt token), averaged over heads, per layer.
    """
    order = {}
    for i, q in enumerate(questions):
        order.setdefault(len(sc.prompt_ids(q)), []).append(i)
    answers = [None] * len(questions)
    shares = [None] * len(questions)
    for _, idx in sorted(order.items()):
        for c in range(0, len(idx), 256):
            chunk = idx[c : c + 256]
            feats = model.vision(torch.from_numpy(sc.normalize(pixels[chunk])))
            ids = torch.tensor([sc.prompt_ids(questions[i]) for i in chunk])
            out = [[] for _ in chunk]
            done = torch.zeros(len(chunk), dtype=torch.bool)
            for step in range(max_new):
                mask = torch.ones_like(ids)
                logits, _, attns, _ = model(ids, feats, mask)
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
                answers[i] = decode(out[j], sc.VOCAB)
    return answers, shares


def decode(ids, vocab):
    inv = {v: k for k, v in vocab.items()}
    return " ".join(inv[i] for i in ids if not inv[i].startswith("<"))


# ------------------------------------------------------------- POPE-style held-out sets


def object_stats(n=20000, seed=99):
    """Frequency of each object and pairwise co-occurrence counts in the training distribution."""
    rng = np.random.RandomState(seed)
    freq = {o: 0 for o in sc.OBJECTS}
    co = {o: {p: 0 for p in sc.OBJECTS} for o in sc.OBJECTS}
    member = 0
    with_partner = 0
    for _ in range(n):
        objs = sc.sample_objects(rng)
        for o in objs:
            freq[o] += 1
            for p in objs:
                if p != o:
                    co[o][p] += 1
            if o in sc.PARTNER:
                member += 1
                with_partner += sc.PARTNER[o] in objs
    return freq, co, with_partner / member


def pope_scene_objects(rng):
    """Held-out POPE scene: mostly a pair member WITHOUT its partner, so adversarial probes exist."""
    non_pair = [o for o in sc.OBJECTS if o not in sc.PARTNER]
    r = rng.rand()
    if r < 0.6:
        m = list(sc.PARTNER)[rng.randint(len(sc.PARTNER))]
        others = list(rng.choice(non_pair, size=rng.randint(0, 3), replace=False))
        return [m] + others
    if r < 0.85:
        a, b = sc.PAIRS[rng.randint(len(sc.PAIRS))]
        return [a, b] + list(rng.choice(non_pair, size=rng.randint(0, 2), replace=False))
    return list(rng.choice(non_pair, size=rng.randint(1, 4), replace=False))


def build_pope(n_images, seed, freq, co, prefix):
    """n_images scenes x 3 splits x (1 yes + 1 no): POPE's random / popular / adversarial negatives."""
    rng = np.random.RandomState(seed)
    popular = sorted(sc.OBJECTS, key=lambda o: (-freq[o], sc.OBJECTS.index(o)))
    images, cases, captions = [], [], []
    counters = {"random": 0, "popular": 0, "adversarial": 0}
    for k in range(n_images):
        objs = pope_scene_objects(rng)
        order = rng.permutation(len(objs))
        objs = [objs[i] for i in order]
        scene = sc.make_scene(rng, objs)
        sid = f"{prefix}scene-{k + 1:04d}"
        images.append(scene["pixels"])
        absent = [o for o in sc.OBJECTS if o not in objs]
        pos_i = rng.randint(len(objs))
        pos = objs[pos_i]
        negs = {
            "random": absent[rng.randint(len(absent))],
            "popular": [o for o in popular if o in absent][rng.randint(3)],
        }
        adv_score = {o: sum(co[p][o] for p in objs) for o in absent}
        best = max(adv_score.values())
        tops = [o for o in absent if adv_score[o] == best]
        negs["adversarial"] = tops[rng.randint(len(tops))]
        base_meta = {
            "scene_objects": objs,
            "n_objects": len(objs),
            "background_gray": int(scene["pixels"][..., 0].mean()),
        }
        for split in ("random", "popular", "adversarial"):
            pair = [(pos, "yes"), (negs[split], "no")]
            if rng.rand() < 0.5:
                pair.reverse()
            for obj, exp in pair:
                counters[split] += 1
                partner_absent = any(sc.PARTNER.get(p) == obj for p in objs) and obj not in objs
                size = scene["boxes"][objs.index(obj)][2] if obj in objs else None
                cases.append(
                    {
                        "id": f"{prefix}pope-{split}-{counters[split]:04d}",
                        "input": {"prompt": "<image> " + sc.existence_q(obj), "image": f"images/{sid}.png"},
                        "expected": exp,
                        "tags": ["pope", split],
                        "split": split,
                        "cluster": sid,
                        "status": "active",
                        "meta": {
                            "object": obj,
                            "question_type": "existence",
                            **base_meta,
                            "co_occurrence_partner_absent": partner_absent,
                            "object_is_pair_member": obj in sc.PARTNER,
                            "object_popularity_rank": popular.index(obj) + 1,
                            "object_size_px": size,
                            "negative_sampling": split if exp == "no" else None,
                        },
                    }
                )
        captions.append(
            {
                "id": f"{prefix}caption-{k + 1:04d}",
                "input": {"prompt": "<image> describe the image .", "image": f"images/{sid}.png"},
                "expected": sc.caption(scene),
                "tags": ["caption"],
                "split": "caption",
                "cluster": sid,
                "status": "active",
                "meta": {"objects": objs, "n_objects": len(objs), **{k2: v for k2, v in base_meta.items() if k2 != "scene_objects"}},
            }
        )
    return np.stack(images), cases, captions


def image_index(case):
    return int(case["cluster"].rsplit("-", 1)[1]) - 1


def mentioned_objects(text):
    w = text.split()
    return [f"{w[i]} {w[i + 1]}" for i in range(len(w) - 1) if f"{w[i]} {w[i + 1]}" in sc.OBJECTS]


def yes_no(ans):
    w = ans.split()
    return w[0] if w and w[0] in ("yes", "no") else "other"


def wilson(k, n, z=1.96):
    if n == 0:
        return [None, None]
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return [round(c - h, 4), round(c + h, 4)]


def rate(k, n):
    return {"k": int(k), "n": int(n), "rate": round(k / n, 4) if n else None, "wilson95": wilson(k, n)}


def pope_metrics(cases, answers, shares):
    res = {}
    for split in ("random", "popular", "adversarial", "all"):
        sel = [i for i, c in enumerate(cases) if split == "all" or c["split"] == split]
        tp = sum(1 for i in sel if cases[i]["expected"] == "yes" and yes_no(answers[i]) == "yes")
        fp = sum(1 for i in sel if cases[i]["expected"] == "no" and yes_no(answers[i]) == "yes")
        pos = sum(1 for i in sel if cases[i]["expected"] == "yes")
        neg = len(sel) - pos
        correct = sum(1 for i in sel if yes_no(answers[i]) == cases[i]["expected"])
        said_yes = sum(1 for i in sel if yes_no(answers[i]) == "yes")
        prec = tp / said_yes if said_yes else 0.0
        recall = tp / pos if pos else 0.0
        res[split] = {
            "accuracy": rate(correct, len(sel)),
            "precision": round(prec, 4),
            "recall": round(recall, 4),
            "f1": round(2 * prec * recall / (prec + recall), 4) if prec + recall else 0.0,
            "yes_ratio": round(said_yes / len(sel), 4),
            "false_positive_rate": rate(fp, neg),
        }
    probes = [i for i, c in enumerate(cases) if c["meta"]["co_occurrence_partner_absent"]]
    hall = [i for i in probes if yes_no(answers[i]) == "yes"]
    ok = [i for i in probes if yes_no(answers[i]) == "no"]
    res["co_occurrence_probes"] = {
        "hallucination": rate(len(hall), len(probes)),
        "image_attention_share_correct": mean_share(shares, ok),
        "image_attention_share_hallucinated": mean_share(shares, hall),
    }
    correct_all = [i for i, c in enumerate(cases) if yes_no(answers[i]) == c["expected"]]
    wrong_all = [i for i, c in enumerate(cases) if yes_no(answers[i]) != c["expected"]]
    res["image_attention_share_all_correct"] = mean_share(shares, correct_all)
    res["image_attention_share_all_wrong"] = mean_share(shares, wrong_all)
    return res


def mean_share(shares, idx):
    if not idx:
        return {"n": 0, "mean": None, "per_layer": None}
    a = np.array([shares[i] for i in idx])
    return {"n": len(idx), "mean": round(float(a.mean()), 4), "per_layer": [round(float(x), 4) for x in a.mean(0)]}


def heldout_by_type(model, n, seed):
    """Accuracy by question type on held-out scenes from the training distribution (co-occurrence prior included)."""
    rng = np.random.RandomState(seed)
    px, qs, exp, kinds, objs = [], [], [], [], []
    for _ in range(n):
        scene = sc.make_scene(rng)
        o = scene["objects"]
        items = [
            (sc.existence_q(o[rng.randint(len(o))]), "yes", "existence_yes"),
            (sc.existence_q([a for a in sc.OBJECTS if a not in o][rng.randint(15 - len(o))]), "no", "existence_no"),
            ("describe the image .", sc.caption(scene), "caption"),
        ]
        at = sc.attribute_qa(rng, scene)
        if at:
            items.append((at[0], at[1], "attribute"))
        for q, a, k in items:
            px.append(scene["pixels"])
            qs.append(q)
            exp.append(a)
            kinds.append(k)
            objs.append(o)
    answers, _ = vlm_generate(model, np.stack(px), qs)
    out = {}
    for k in ("existence_yes", "existence_no", "attribute", "caption"):
        sel = [i for i in range(len(qs)) if kinds[i] == k]
        out[k] = rate(sum(answers[i] == exp[i] for i in sel), len(sel))
    caps = [i for i in range(len(qs)) if kinds[i] == "caption"]
    out["caption_chair"] = chair([answers[i] for i in caps], [objs[i] for i in caps])
    return out


def chair(texts, truths):
    mentioned = halluc = bad_caps = 0
    for t, truth in zip(texts, truths):
        m = mentioned_objects(t)
        h = [o for o in m if o not in truth]
        mentioned += len(m)
        halluc += len(h)
        bad_caps += bool(h)
    return {"chair_i": rate(halluc, mentioned), "chair_s": rate(bad_caps, len(texts))}


# ----------------------------------------------------------------------------- LM


def train_lm(steps, batch, seed=2):
    seed_all(seed)
    dec = Decoder(len(lmtask.VOCAB), LM["d"], LM["layers"], LM["heads"], LM["inter"])
    rng = np.random.RandomState(seed)
    opt = torch.optim.AdamW(dec.parameters(), lr=3e-3, weight_decay=0.01)
    t0 = time.time()
    for step in range(steps):
        seqs, starts = [], []
        for _ in range(batch):
            p, a = lmtask.training_example(rng)
            seqs.append(p + a)
            starts.append(len(p))
        ids, mask, tgt = pad_batch(seqs, starts)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, 3e-3)
        pos = torch.arange(ids.shape[1]).unsqueeze(0).repeat(ids.shape[0], 1)
        logits = dec(dec.embed_tokens(ids), mask, pos, dec.empty_past(ids.shape[0]))[0]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(dec.parameters(), 1.0)
        opt.step()
        if step % 200 == 0 or step == steps - 1:
            log(f"lm step {step}/{steps} loss {loss.item():.4f} ({time.time() - t0:.0f}s)")
    dec.eval()
    return dec


@torch.no_grad()
def lm_generate(dec, prompts, max_new=MAX_NEW_TOKENS):
    groups = {}
    for i, p in enumerate(prompts):
        groups.setdefault(len(p), []).append(i)
    out = [None] * len(prompts)
    for _, idx in groups.items():
        ids = torch.tensor([prompts[i] for i in idx])
        gen = [[] for _ in idx]
        done = [False] * len(idx)
        for _ in range(max_new):
            pos = torch.arange(ids.shape[1]).unsqueeze(0).repeat(ids.shape[0], 1)
            logits = dec(dec.embed_tokens(ids), torch.ones_like(ids), pos, dec.empty_past(ids.shape[0]))[0]
            nxt = logits[:, -1].argmax(-1)
            for j in range(len(idx)):
                if not done[j]:
                    if nxt[j].item() == lmtask.EOS:
                        done[j] = True
                    else:
                        gen[j].append(nxt[j].item())
            if all(done):
                break
            ids = torch.cat([ids, nxt.unsqueeze(1)], 1)
        for j, i in enumerate(idx):
            out[i] = decode(gen[j], lmtask.VOCAB)
    return out


# ----------------------------------------------------------------------------- files


def write_vlm_folder(model, folder):
    os.makedirs(os.path.join(folder, "onnx"), exist_ok=True)
    dec = model.dec
    o = lambda n: os.path.join(folder, "onnx", n)  # noqa: E731
    ex.export_vision(model.vision, o("vision_encoder.onnx"), sc.IMAGE_SIZE)
    ex.export_embed(dec, o("embed_tokens.onnx"))
    ex.export_decoder(dec, o("decoder_model_merged.onnx"), tapped=True, embed_inside=False)
    ex.export_decoder(dec, o("decoder_untapped.onnx"), tapped=False, embed_inside=False)
    ex.export_head(dec, o("lm_head.onnx"))
    grid = sc.IMAGE_SIZE // sc.PATCH
    tc = ex.text_config(dec, 128)
    cfg = {
        "model_type": "llava",
        "architectures": ["LlavaForConditionalGeneration"],
        "image_token_index": sc.IMG,
        "image_seq_length": grid * grid,
        "projector_hidden_act": "gelu",
        "vision_feature_layer": -1,
        "vision_feature_select_strategy": "full",
        "text_config": tc,
        "vision_config": {
            "model_type": "evalrx_vit",
            "image_size": sc.IMAGE_SIZE,
            "patch_size": sc.PATCH,
            "num_channels": 3,
            "hidden_size": VLM["dv"],
            "num_hidden_layers": VLM["v_layers"],
            "num_attention_heads": VLM["v_heads"],
        },
        "vocab_size": dec.vocab,
        "bos_token_id": sc.BOS,
        "eos_token_id": sc.EOS,
        "pad_token_id": sc.PAD,
        "torch_dtype": "float32",
        "evalrx": evalrx_block(dec, "decoder_model_merged.onnx", "decoder_untapped.onnx", grid),
    }
    ex.write_json(os.path.join(folder, "config.json"), cfg)
    ex.write_json(os.path.join(folder, "generation_config.json"), gen_config())
    ex.write_json(
        os.path.join(folder, "preprocessor_config.json"),
        {
            "processor_class": "LlavaProcessor",
            "image_processor_type": "CLIPImageProcessor",
            "do_convert_rgb": True,
            "do_resize": True,
            "size": {"height": sc.IMAGE_SIZE, "width": sc.IMAGE_SIZE},
            "resample": 2,
            "do_center_crop": False,
            "do_rescale": True,
            "rescale_factor": 1 / 255,
            "do_normalize": True,
            "image_mean": [0.5, 0.5, 0.5],
            "image_std": [0.5, 0.5, 0.5],
        },
    )
    ex.write_json(
        os.path.join(folder, "processor_config.json"),
        {"processor_class": "LlavaProcessor", "image_token": "<image>", "patch_size": sc.PATCH, "num_additional_image_tokens": 0},
    )
    ex.write_json(os.path.join(folder, "tokenizer.json"), ex.tokenizer_json(sc.VOCAB, sc.SPECIALS))
    ex.write_json(os.path.join(folder, "tokenizer_config.json"), ex.tokenizer_config(128, {"image_token": "<image>"}))


def evalrx_block(dec, tapped, untapped, grid=None):
    b = {
        "format": 1,
        "tapped_decoder": f"onnx/{tapped}",
        "untapped_decoder": f"onnx/{untapped}",
        "lm_head": "onnx/lm_head.onnx",
        "attention_outputs": [f"attentions.{i}" for i in range(dec.n_layers)],
        "hidden_state_outputs": [f"hidden_states.{i}" for i in range(dec.n_layers + 1)],
    }
    if grid:
        b["image_grid"] = [grid, grid]
        b["image_token_positions"] = {"first": 1, "count": grid * grid, "order": "row-major patches after BOS"}
    return b


def gen_config():
    return {"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0, "do_sample": False, "max_length": 128, "max_new_tokens": MAX_NEW_TOKENS}


def write_lm_folder(dec, folder):
    os.makedirs(os.path.join(folder, "onnx"), exist_ok=True)
    o = lambda n: os.path.join(folder, "onnx", n)  # noqa: E731
    ex.export_decoder(dec, o("model.onnx"), tapped=True, embed_inside=True)
    ex.export_decoder(dec, o("model_untapped.onnx"), tapped=False, embed_inside=True)
    ex.export_head(dec, o("lm_head.onnx"))
    cfg = ex.text_config(dec, 64)
    cfg["evalrx"] = evalrx_block(dec, "model.onnx", "model_untapped.onnx")
    ex.write_json(os.path.join(folder, "config.json"), cfg)
    ex.write_json(os.path.join(folder, "generation_config.json"), gen_config())
    ex.write_json(os.path.join(folder, "tokenizer.json"), ex.tokenizer_json(lmtask.VOCAB, lmtask.SPECIALS))
    ex.write_json(os.path.join(folder, "tokenizer_config.json"), ex.tokenizer_config(64))


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def forge_lm(args, demo):
    torch.set_num_threads(1)
    lm_steps = args.lm_steps or (30 if args.quick else LM_STEPS)
    # ---- tiny-lm
    lm = train_lm(lm_steps, LM_BATCH)
    lm_dir = os.path.join(ROOT, "models", "tiny-lm")
    write_lm_folder(lm, lm_dir)
    rng = np.random.RandomState(7)
    lm_cases = []
    for length in range(2, 15):
        for _ in range(16):
            d = lmtask.sample_digits(rng, length)
            lm_cases.append(
                {
                    "id": f"lm-{len(lm_cases) + 1:04d}",
                    "input": {"prompt": lmtask.prompt_text(d)},
                    "expected": lmtask.answer_text(d),
                    "tags": ["tiny-lm", "reverse"],
                    "split": "test",
                    "cluster": f"lm-{len(lm_cases) + 1:04d}",
                    "status": "active",
                    "meta": lmtask.case_meta(d),
                }
            )
    lm_answers = lm_generate(lm, [[lmtask.BOS] + lmtask.encode(c["input"]["prompt"]) for c in lm_cases])
    by_len = {}
    for c, a in zip(lm_cases, lm_answers):
        n = c["meta"]["length"]
        k, m = by_len.get(n, (0, 0))
        by_len[n] = (k + (a == c["expected"]), m + 1)
    # a larger held-out check of the failure region
    rng = np.random.RandomState(8)
    big = [lmtask.sample_digits(rng, n) for n in range(1, 17) for _ in range(40)]
    big_ans = lm_generate(lm, [lmtask.prompt_ids(d) for d in big])
    big_by_len = {}
    for d, a in zip(big, big_ans):
        k, m = big_by_len.get(len(d), (0, 0))
        big_by_len[len(d)] = (k + (a == lmtask.answer_text(d)), m + 1)
    write_jsonl(os.path.join(demo, "tiny-lm.jsonl"), lm_cases)
    lm_numbers = {
        "params": count_params(lm),
        "train_lengths": [1, lmtask.TRAIN_MAX_LEN],
        "heldout_accuracy_by_length": {str(n): rate(*big_by_len[n]) for n in sorted(big_by_len)},
        "demo_accuracy_by_length": {str(n): rate(*by_len[n]) for n in sorted(by_len)},
        "demo_accuracy": rate(sum(k for k, _ in by_len.values()), len(lm_cases)),
    }
    ex.write_json(
        os.path.join(lm_dir, "eval-reference.json"),
        {
            "model": "tiny-lm",
            "dataset": "public/demo/tiny-lm.jsonl",
            "decoding": {"strategy": "greedy", "max_new_tokens": MAX_NEW_TOKENS, "stop": "</s>"},
            "answers": {c["id"]: a for c, a in zip(lm_cases, lm_answers)},
            "card": lm_numbers,
        },
    )
    write_lm_card(lm_dir, LM, lm_numbers, lm_steps, args.quick, LM_BATCH)
    log("tiny-lm done", json.dumps(lm_numbers["heldout_accuracy_by_length"])[:300])



def forge_vlm(args, demo):
    torch.set_num_threads(1)
    vlm_steps = args.vlm_steps or (30 if args.quick else VLM_STEPS)
    n_eval = 60 if args.quick else 300
    n_heldout = 60 if args.quick else 400
    # ---- tiny-vlm
    model = train_vlm(vlm_steps, VLM_BATCH)
    vlm_dir = os.path.join(ROOT, "models", "tiny-vlm")
    write_vlm_folder(model, vlm_dir)
    freq, co, co_rate = object_stats()
    imgs, cases, caps = build_pope(100, 11, freq, co, "")
    for k, px in enumerate(imgs):
        Image.fromarray(px).save(os.path.join(demo, "images", f"scene-{k + 1:04d}.png"), optimize=True)
    write_jsonl(os.path.join(demo, "pope.jsonl"), cases)
    write_jsonl(os.path.join(demo, "captions.jsonl"), caps)
    q = [c["input"]["prompt"].replace("<image> ", "") for c in cases]
    answers, shares = vlm_generate(model, imgs[[image_index(c) for c in cases]], q)
    cap_answers, _ = vlm_generate(model, imgs[[image_index(c) for c in caps]], ["describe the image ."] * len(caps))
    demo_metrics = pope_metrics(cases, answers, shares)
    demo_metrics["captions"] = {
        "exact_match": rate(sum(a == c["expected"] for a, c in zip(cap_answers, caps)), len(caps)),
        **chair(cap_answers, [c["meta"]["objects"] for c in caps]),
    }
    # a larger held-out POPE set (not shipped) for tighter intervals
    e_imgs, e_cases, _ = build_pope(n_eval, 12, freq, co, "eval-")
    e_ans, e_sh = vlm_generate(model, e_imgs[[image_index(c) for c in e_cases]], [c["input"]["prompt"].replace("<image> ", "") for c in e_cases])
    eval_metrics = pope_metrics(e_cases, e_ans, e_sh)
    by_type = heldout_by_type(model, n_heldout, 13)
    vlm_numbers = {
        "params": {"vision_encoder": count_params(model.vision), "decoder": count_params(model.dec), "total": count_params(model.vision) + count_params(model.dec)},
        "training_co_occurrence_rate": round(co_rate, 4),
        "object_frequency": {o: freq[o] for o in sc.OBJECTS},
        "heldout_by_question_type": by_type,
        "pope_heldout": eval_metrics,
        "pope_demo": demo_metrics,
    }
    ex.write_json(
        os.path.join(vlm_dir, "eval-reference.json"),
        {
            "model": "tiny-vlm",
            "datasets": ["public/demo/pope.jsonl", "public/demo/captions.jsonl"],
            "decoding": {"strategy": "greedy", "max_new_tokens": MAX_NEW_TOKENS, "stop": "</s>"},
            "image_attention_share": {
                "definition": "attention probability mass on the image-token keys (positions 1..36) from the query at the last prompt token, mean over heads, per layer",
                "per_case": {c["id"]: [round(x, 6) for x in s] for c, s in zip(cases, shares)},
            },
            "answers": {**{c["id"]: a for c, a in zip(cases, answers)}, **{c["id"]: a for c, a in zip(caps, cap_answers)}},
            "card": vlm_numbers,
        },
    )
    write_vlm_card(vlm_dir, VLM, vlm_numbers, vlm_steps, args.quick, sc, VLM_BATCH, QA_PER_IMAGE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a few training steps: checks the plumbing only")
    ap.add_argument("--vlm-steps", type=int, default=None)
    ap.add_argument("--lm-steps", type=int, default=None)
    args = ap.parse_args()
    t_start = time.time()
    demo = os.path.join(ROOT, "public", "demo")
    os.makedirs(os.path.join(demo, "images"), exist_ok=True)
    # Two processes with one thread each: uses both cores, and one intra-op thread keeps every
    # floating-point reduction in a fixed order (deterministic) and avoids OpenMP spinning on a busy machine.
    child = os.fork()
    if child == 0:
        try:
            forge_lm(args, demo)
        finally:
            os._exit(0)
    forge_vlm(args, demo)
    _, status = os.waitpid(child, 0)
    if status != 0:
        raise SystemExit("the tiny-lm process failed")
    cards = [os.path.join(ROOT, "models", d, "README.md") for d in ("tiny-vlm", "tiny-lm")]
    # the repository's `prettier --check .` covers markdown: format the generated cards the same way
    if shutil.which("npx"):
        subprocess.run(["npx", "prettier", "--write", *cards], cwd=ROOT, check=False)
    sizes = {d: ex.size_report(os.path.join(ROOT, "models", d)) for d in ("tiny-vlm", "tiny-lm")}
    ru = resource.getrusage(resource.RUSAGE_SELF)
    rc = resource.getrusage(resource.RUSAGE_CHILDREN)
    log("sizes", sizes, "demo", ex.size_report(demo))
    log(f"forge done in {time.time() - t_start:.0f}s wall, CPU {ru.ru_utime + ru.ru_stime:.0f}s (vlm) + {rc.ru_utime + rc.ru_stime:.0f}s (lm, prettier)")


if __name__ == "__main__":
    main()
