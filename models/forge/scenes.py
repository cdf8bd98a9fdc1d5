"""Synthetic scenes for tiny-vlm: a few coloured shapes on a small noisy canvas.

The training distribution carries a deliberate co-occurrence prior: each object in
PAIRS brings its partner along with probability CO_OCCURRENCE, so a model can learn
"red circle => blue square" instead of looking -- the POPE adversarial failure.
"""
import numpy as np
from PIL import Image, ImageDraw

IMAGE_SIZE = 48
PATCH = 8
COLOURS = {
    "red": (215, 40, 40),
    "green": (40, 165, 60),
    "blue": (45, 75, 215),
    "yellow": (225, 195, 35),
    "purple": (145, 55, 185),
}
SHAPES = ["circle", "square", "triangle"]
OBJECTS = [f"{c} {s}" for c in COLOURS for s in SHAPES]
PAIRS = [("red circle", "blue square"), ("green triangle", "yellow circle"), ("purple square", "blue triangle")]
PARTNER = {}
for a, b in PAIRS:
    PARTNER[a] = b
    PARTNER[b] = a
CO_OCCURRENCE = 0.99
# Pair members are drawn more often as the first object, so they are also the
# "popular" objects of POPE's popular split.
FIRST_WEIGHT = np.array([3.0 if o in PARTNER else 1.0 for o in OBJECTS])
FIRST_WEIGHT /= FIRST_WEIGHT.sum()

SPECIALS = ["<pad>", "<s>", "</s>", "<unk>", "<image>"]
WORDS = (
    ["is", "there", "a", "?", ".", ",", "and", "yes", "no", "describe", "the", "image"]
    + ["what", "colour", "shape", "object"]
    + list(COLOURS)
    + SHAPES
)
VOCAB = {t: i for i, t in enumerate(SPECIALS + WORDS)}
PAD, BOS, EOS, UNK, IMG = (VOCAB[t] for t in SPECIALS)


def sample_objects(rng, co_occurrence=CO_OCCURRENCE, n=None):
    """Object names of one training-distribution scene (1..4 objects, distinct)."""
    n = n or int(rng.choice([1, 2, 3, 4], p=[0.15, 0.35, 0.3, 0.2]))
    objs = []
    while len(objs) < n:
        if not objs:
            o = OBJECTS[rng.choice(len(OBJECTS), p=FIRST_WEIGHT)]
        else:
            rest = [o for o in OBJECTS if o not in objs]
            o = rest[rng.randint(len(rest))]
        if o in objs:
            continue
        objs.append(o)
        p = PARTNER.get(o)
        if p and p not in objs and len(objs) < 4 and rng.rand() < co_occurrence:
            objs.append(p)
    return objs


def place(rng, objs):
    """Non-overlapping boxes (x, y, size) for the objects, in the order given."""
    for shrink in range(6):
        boxes = []
        ok = True
        for _ in objs:
            for _try in range(60):
                s = int(rng.randint(12 - shrink, 19 - shrink))
                x = int(rng.randint(0, IMAGE_SIZE - s + 1))
                y = int(rng.randint(0, IMAGE_SIZE - s + 1))
                if all(x + s + 1 <= bx or bx + bs + 1 <= x or y + s + 1 <= by or by + bs + 1 <= y for bx, by, bs in boxes):
                    boxes.append((x, y, s))
                    break
            else:
                ok = False
                break
        if ok:
            return boxes
    raise RuntimeError("could not place objects")


def draw_shape(draw, shape, x, y, s, fill):
    if shape == "circle":
        draw.ellipse([x, y, x + s - 1, y + s - 1], fill=fill)
    elif shape == "square":
        m = s // 8
        draw.rectangle([x + m, y + m, x + s - 1 - m, y + s - 1 - m], fill=fill)
    else:
        draw.polygon([(x + (s - 1) / 2, y), (x, y + s - 1), (x + s - 1, y + s - 1)], fill=fill)


def render(rng, objs, boxes):
    """RGB uint8 array [H, W, 3] (noisy light background, jittered object colours), a per-pixel object map,
    and the background level g the noise was added to."""
    g = int(rng.randint(185, 236))
    bg = np.clip(g + rng.randint(-8, 9, size=(IMAGE_SIZE, IMAGE_SIZE, 1)), 0, 255).astype(np.uint8)
    img = Image.fromarray(np.repeat(bg, 3, axis=2))
    labels = Image.new("L", (IMAGE_SIZE, IMAGE_SIZE), 0)
    draw, ldraw = ImageDraw.Draw(img), ImageDraw.Draw(labels)
    for o, (x, y, s) in zip(objs, boxes):
        colour, shape = o.split()
        c = tuple(int(np.clip(v + rng.randint(-18, 19), 0, 255)) for v in COLOURS[colour])
        draw_shape(draw, shape, x, y, s, c)
        draw_shape(ldraw, shape, x, y, s, OBJECTS.index(o) + 1)
    return np.asarray(img, dtype=np.uint8), np.asarray(labels, dtype=np.int64), g


def patch_labels(label_map):
    """Per patch (row-major): 1 + the object covering most of it if it covers >= 12 of its pixels, else 0."""
    g = IMAGE_SIZE // PATCH
    blocks = label_map.reshape(g, PATCH, g, PATCH).transpose(0, 2, 1, 3).reshape(g * g, PATCH * PATCH)
    out = np.zeros(g * g, dtype=np.int64)
    for i, b in enumerate(blocks):
        counts = np.bincount(b, minlength=len(OBJECTS) + 1)
        counts[0] = 0
        if counts.max() >= 12:
            out[i] = counts.argmax()
    return out


def make_scene(rng, objs=None):
    objs = objs if objs is not None else sample_objects(rng)
    boxes = place(rng, objs)
    pixels, labels, background = render(rng, objs, boxes)
    return {"objects": objs, "boxes": boxes, "pixels": pixels, "patch_labels": patch_labels(labels), "background": background}


def caption(scene):
    order = sorted(range(len(scene["objects"])), key=lambda i: (scene["boxes"][i][0] + scene["boxes"][i][2] / 2, scene["boxes"][i][1]))
    names = [f"a {scene['objects'][i]}" for i in order]
    if len(names) == 1:
        return names[0] + " ."
    return " , ".join(names[:-1]) + " and " + names[-1] + " ."


def existence_q(obj):
    return f"is there a {obj} ?"


def training_qa(rng, scene):
    """One (question, answer, question_type) for a scene, from the training mix."""
    objs = scene["objects"]
    r = rng.rand()
    if r < 0.6:
        if rng.rand() < 0.5:
            o = objs[rng.randint(len(objs))]
            return existence_q(o), "yes", "existence"
        absent = [o for o in OBJECTS if o not in objs]
        return existence_q(absent[rng.randint(len(absent))]), "no", "existence"
    if r < 0.8:
        q = attribute_qa(rng, scene)
        if q:
            return q
    return "describe the image .", caption(scene), "caption"


def attribute_qa(rng, scene):
    objs = scene["objects"]
    shapes = [o.split()[1] for o in objs]
    colours = [o.split()[0] for o in objs]
    if rng.rand() < 0.5:
        uniq = [s for s in SHAPES if shapes.count(s) == 1]
        if uniq:
            s = uniq[rng.randint(len(uniq))]
            return f"what colour is the {s} ?", colours[shapes.index(s)], "attribute"
    uniq = [c for c in COLOURS if colours.count(c) == 1]
    if uniq:
        c = uniq[rng.randint(len(uniq))]
        return f"what shape is the {c} object ?", shapes[colours.index(c)], "attribute"
    return None


def encode(text):
    return [VOCAB.get(w, UNK) for w in text.split()]


def prompt_ids(question):
    """Token ids of '<image> question' after the processor expanded <image> and the tokenizer added BOS."""
    n = (IMAGE_SIZE // PATCH) ** 2
    return [BOS] + [IMG] * n + encode(question)


def normalize(pixels):
    """uint8 [N, H, W, 3] -> float32 [N, 3, H, W], x/255 then (x - 0.5)/0.5, as the preprocessor does."""
    x = pixels.astype(np.float32) / 255.0
    x = (x - 0.5) / 0.5
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))
