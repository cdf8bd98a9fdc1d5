"""The tiny-lm task: reverse a sequence of digits.

"reverse 3 1 4 =" -> "4 1 3". Training uses lengths 1..TRAIN_MAX_LEN only, so longer
inputs are the model's known failure region (it never saw those relative distances).
"""
import numpy as np

TRAIN_MAX_LEN = 8
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]
WORDS = ["reverse", "="] + [str(d) for d in range(10)]
VOCAB = {t: i for i, t in enumerate(SPECIALS + WORDS)}
PAD, BOS, EOS, UNK = (VOCAB[t] for t in SPECIALS)


def sample_digits(rng, length):
    return [int(d) for d in rng.randint(0, 10, size=length)]


def prompt_text(digits):
    return "reverse " + " ".join(map(str, digits)) + " ="


def answer_text(digits):
    return " ".join(map(str, digits[::-1]))


def encode(text):
    return [VOCAB.get(w, UNK) for w in text.split()]


def prompt_ids(digits):
    return [BOS] + encode(prompt_text(digits))


def training_example(rng):
    n = int(rng.randint(1, TRAIN_MAX_LEN + 1))
    d = sample_digits(rng, n)
    return prompt_ids(d), encode(answer_text(d)) + [EOS]


def case_meta(digits):
    runs, best = 1, 1
    for a, b in zip(digits, digits[1:]):
        runs = runs + 1 if a == b else 1
        best = max(best, runs)
    return {
        "length": len(digits),
        "distinct_digits": len(set(digits)),
        "longest_run": best,
        "digit_sum": int(sum(digits)),
        "starts_with_zero": digits[0] == 0,
        "is_palindrome": digits == digits[::-1],
    }
