"""Network definitions shared by the tiny VLM and the tiny LM.

The decoder is Llama-shaped (RMSNorm, RoPE, SwiGLU MLP, no biases) and computes
attention unfused -- MatMul(Q, K^T) * scale + mask -> Softmax -> MatMul(., V) --
so that every exported decoder has a Softmax node per layer that a graph tap can
discover, and so that the attention probabilities can be returned as outputs.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

# Added to the scores of keys a query may not see. Finite, so a row whose keys
# are all masked (a left-padding query) still softmaxes to finite numbers.
MASK_VALUE = -1e9


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = d // heads
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, d, bias=False)
        self.v_proj = nn.Linear(d, d, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)

    def forward(self, x, cos, sin, mask_add, past_k, past_v):
        b, s, d = x.shape
        q = self.q_proj(x).reshape(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).reshape(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).reshape(b, s, self.heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.head_dim)) + mask_add
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, d)
        return self.o_proj(out), k, v, probs


class MLP(nn.Module):
    def __init__(self, d, inter):
        super().__init__()
        self.gate_proj = nn.Linear(d, inter, bias=False)
        self.up_proj = nn.Linear(d, inter, bias=False)
        self.down_proj = nn.Linear(inter, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, d, heads, inter):
        super().__init__()
        self.input_layernorm = RMSNorm(d)
        self.self_attn = Attention(d, heads)
        self.post_attention_layernorm = RMSNorm(d)
        self.mlp = MLP(d, inter)

    def forward(self, x, cos, sin, mask_add, past_k, past_v):
        a, k, v, p = self.self_attn(self.input_layernorm(x), cos, sin, mask_add, past_k, past_v)
        x = x + a
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x, k, v, p


class Decoder(nn.Module):
    """A Llama-style causal decoder over input embeddings, with a KV cache."""

    def __init__(self, vocab, d, layers, heads, inter, rope_theta=10000.0):
        super().__init__()
        self.vocab = vocab
        self.d = d
        self.n_layers = layers
        self.heads = heads
        self.head_dim = d // heads
        self.inter = inter
        self.rope_theta = rope_theta
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([DecoderLayer(d, heads, inter) for _ in range(layers)])
        self.norm = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        inv = 1.0 / (rope_theta ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        self.register_buffer("inv_freq", inv, persistent=False)

    def empty_past(self, batch):
        z = torch.zeros(batch, self.heads, 0, self.head_dim)
        return [(z, z) for _ in range(self.n_layers)]

    def head(self, hidden):
        return self.lm_head(self.norm(hidden))

    def forward(self, inputs_embeds, attention_mask, position_ids, past, allowed=None, score_bias=None):
        """Returns logits, presents [(k, v)], attention probabilities per layer, hidden states (L+1).

        `allowed` [B, 1, S, T] (training only) replaces the causal x padding mask, e.g. to pack several
        questions about one image into one sequence, each seeing only the shared prefix and itself.
        `score_bias` (broadcastable to [B, 1, S, T], training and measurement only, never exported) is added
        to every layer's and head's pre-softmax scores: the attention_write intervention EvalRx applies.
        """
        b, s, _ = inputs_embeds.shape
        t = attention_mask.shape[1]
        if allowed is None:
            # Causal mask offset by the past length; the padding mask arrives 2-D.
            qi = torch.arange(s).unsqueeze(1) + (t - s)
            kj = torch.arange(t).unsqueeze(0)
            allowed = (kj <= qi).unsqueeze(0).unsqueeze(0) & (attention_mask.unsqueeze(1).unsqueeze(1) > 0)
        mask_add = (1.0 - allowed.float()) * MASK_VALUE
        if score_bias is not None:
            mask_add = mask_add + score_bias
        freqs = position_ids.unsqueeze(-1).float() * self.inv_freq
        emb = torch.cat([freqs, freqs], dim=-1)
        cos = emb.cos().unsqueeze(1)
        sin = emb.sin().unsqueeze(1)
        x = inputs_embeds
        hiddens = [x]
        presents = []
        attns = []
        for layer, (pk, pv) in zip(self.layers, past):
            x, k, v, p = layer(x, cos, sin, mask_add, pk, pv)
            presents.append((k, v))
            attns.append(p)
            hiddens.append(x)
        return self.head(x), presents, attns, hiddens


class ViTBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        b, n, d = x.shape
        hd = d // self.heads
        qkv = self.qkv(self.ln1(x)).reshape(b, n, 3, self.heads, hd).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        p = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(hd)), dim=-1)
        x = x + self.proj(torch.matmul(p, v).transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class VisionEncoder(nn.Module):
    """Conv stem with total stride P (one feature per P x P patch) -> ViT blocks -> LayerNorm -> 2-layer projector.

    Output rows are the patches in row-major order (row 0 left to right, then row 1, ...). The stem's
    receptive field is wider than a patch, so a shape split across patches is still seen whole.
    """

    def __init__(self, image_size, patch, dv, heads, layers, d_text, stem=(16, 32, 48)):
        super().__init__()
        assert patch == 8, "the conv stem has stride 8"
        self.grid = image_size // patch
        c1, c2, c3 = stem
        self.patch_embed = nn.Sequential(
            nn.Conv2d(3, c1, 3, padding=1),
            nn.GELU(),
            nn.Conv2d(c1, c2, 3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv2d(c2, c3, 3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv2d(c3, dv, 2, stride=2),
        )
        self.pos = nn.Parameter(torch.randn(1, self.grid * self.grid, dv) * 0.02)
        self.blocks = nn.ModuleList([ViTBlock(dv, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(dv)
        self.proj1 = nn.Linear(dv, d_text)
        self.proj2 = nn.Linear(d_text, d_text)

    def forward(self, pixel_values):
        x = self.patch_embed(pixel_values).flatten(2).transpose(1, 2) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.proj2(F.gelu(self.proj1(self.ln(x))))


def count_params(module):
    return sum(p.numel() for p in module.parameters())
