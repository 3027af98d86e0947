"""Whisper's encoder over one clip's 30 s window with the padding after the clip merged: the
encoder of Whisper's turn-completion cue (:mod:`turneval.whisper_completion`).

Whisper hears a clip at the start of its 30 s window and silence after it. Past the clip the
log-mel frames are one constant, so only the clip's own frames are convolved
(:func:`convolved_positions`); the padding's first :data:`PADDING_ONE_BY_ONE` positions are kept
one by one and the rest are read in groups of :data:`PADDING_GROUP`, each group one position that
every attention counts that many times (:func:`merged_padding_states`). In bfloat16 the attention
is three products a head at one shared length (:func:`encoder_attention`), and every length is
padded to a multiple of :data:`SHAPE_BUCKET`: oneDNN keeps a compiled kernel for each shape.
"""
from __future__ import annotations

import math
from typing import Any


PADDING_GROUP = 4
"""The padding after the clip, past its first :data:`PADDING_ONE_BY_ONE` positions, is read in
groups of this many positions (1: the 30 s window exactly). The criterion, fixed before any was
measured: the cheapest reading whose cue stays within r >= 0.99 of the exact reading on the 248
real dev pauses. Every group alike, 2 was the largest that held it (r = 0.9957, largest
difference 1.6; 0.40 CPU s a pause against 0.58 then; 5: r = 0.961). The padding next to the
speech matters most: with its first 100 positions one by one, groups of 4 give r = 0.9975
(groups of 2 after them 0.9978; 50 one by one 0.9914; groups of 5, 6 or 8 0.989, 0.989, 0.984),
768 positions instead of 960, 0.123-0.157 against 0.145-0.190 CPU s a pause for pairs
everywhere (5 runs alternating on 2026-11-29, a slow hour; medians 0.146 / 0.172)."""
PADDING_ONE_BY_ONE = 100
"""The encoder positions after the clip (2 s) read one by one before the padding's groups start."""


PADDING_MARGIN_POSITIONS = 2
"""Encoder positions past the clip's end kept one by one: Whisper's two convolutions (kernel 3,
the second with stride 2) mix the clip's last mel frames into them."""


def merged_padding_states(encoder: Any, features: Any, n_samples: int, group: int, attention_length: int | None = None) -> tuple[Any, Any]:
    """Whisper's encoder over one clip's 30 s window (``features``: ``[1, mel, 3000]``) with the
    padding after the clip read in groups of ``group`` positions, past the first
    :data:`PADDING_ONE_BY_ONE` (:func:`_padding_groups`): each group is one position (its middle,
    as the convolutions and the positional table give it) that every attention counts ``group``
    times (``log(group)`` added to its scores). Returns the states ``[positions, width]`` and each
    position's log count ``[positions]``; ``group`` 1 gives the encoder's own states.
    ``attention_length``: the attention's length whatever the clip's (:func:`encoder_attention`;
    the report's: the longest a clip can have).

    Why it holds: past the clip the log-mel frames are one constant, so the padding positions
    differ only by their positional embedding, which moves little from one position to the next;
    the decoder reads the clip's own positions, where the shortcut changes only what the padding
    adds to their attention."""
    import torch

    positions = encoder.embed_positions.weight
    total = positions.shape[0]
    exact = _exact_positions(n_samples, total)
    groups = _padding_groups(exact, total, group)
    keep = torch.tensor(list(range(exact)) + [min(a + size // 2, total - 1) for a, size in groups], device=positions.device)
    counts = torch.tensor([1.0] * exact + [float(size) for _, size in groups], device=positions.device, dtype=positions.dtype)
    h = (convolved_positions(encoder, features, exact, keep) + positions.index_select(0, keep))[None]
    bias = torch.log(counts)
    n = h.shape[1]
    padded = round_up(n, SHAPE_BUCKET)  # rows no attention reads: their keys count 0 (log 0 = -inf)
    h = torch.cat([h, h.new_zeros(1, padded - n, h.shape[2])], dim=1)
    mask = torch.cat([bias, bias.new_full((padded - n,), float("-inf"))]).to(h.dtype)[None, None, None, :]
    first = encoder.layers[0].self_attn
    heads, head_dim = first.num_heads, first.head_dim

    def split(t: Any) -> Any:
        return t.view(1, -1, heads, head_dim).transpose(1, 2)

    for layer in encoder.layers:
        a = layer.self_attn
        y = layer.self_attn_layer_norm(h)
        attended = encoder_attention(split(a.q_proj(y) * a.scaling), split(a.k_proj(y)), split(a.v_proj(y)), mask, attention_length)
        h = h + a.out_proj(attended.transpose(1, 2).reshape(1, -1, heads * head_dim))
        h = h + layer.fc2(layer.activation_fn(layer.fc1(layer.final_layer_norm(h))))
    return encoder.layer_norm(h[:, :n])[0], bias


def encoder_attention(query: Any, key: Any, value: Any, mask: Any, length: int | None = None) -> Any:
    """Attention of one clip's merged states (``[1, heads, positions, head_dim]``), ``mask`` added to
    every score (``[1, 1, 1, positions]``); in bfloat16 over ``length`` positions (at least the
    clip's), the rest absent.

    In bfloat16 as three products a head: the scores (with the mask) in one ``baddbmm``, their
    softmax, and the product with the values. On CPU these are 7.2 against 13.1 ms for 768
    positions in ``scaled_dot_product_attention`` (whose bfloat16 kernel reads no faster than its
    float32 one); one head at a time keeps its scores (1.2 MB) in the cache and adds nothing to
    the peak (all six heads at once: 14 MB more, and slower). oneDNN keeps 1.2 MB for every shape
    of these products it has run, so every clip's run at one length, the longest a clip can have
    (a report's clips came in 9 lengths: 11 MB kept). The scores are rounded to bfloat16 where the
    fused kernel keeps them float32: r = 0.99996 with its cue on the 248 dev clips, largest
    difference 0.22, r with the exact reading 0.99749 against 0.99747 (benchmarks/experiments/
    whisper_cue_cost.py, 2026-11-29, an AVX512-BF16 CPU). float32 keeps the fused kernel (its
    three products are 2.5 times slower)."""
    import torch
    from torch.nn.functional import pad, scaled_dot_product_attention

    if query.dtype != torch.bfloat16:
        return scaled_dot_product_attention(query, key, value, attn_mask=mask, scale=1.0)
    batch, heads, n, head_dim = query.shape
    length = max(n, length or n)
    flat = (batch * heads, n, head_dim)
    query, key, value = (pad(t.reshape(flat), (0, 0, 0, length - n)) for t in (query, key, value))  # zero positions after the clip's
    mask = pad(mask.reshape(1, 1, -1), (0, length - n), value=float("-inf")).expand(1, length, -1)
    out = torch.empty(batch * heads, length, head_dim, dtype=query.dtype, device=query.device)
    for h in range(batch * heads):
        scores = torch.baddbmm(mask, query[h : h + 1], key[h : h + 1].transpose(1, 2))
        torch.bmm(torch.softmax(scores, -1), value[h : h + 1], out=out[h : h + 1])
    return out[:, :n].reshape(batch, heads, n, head_dim)


SHAPE_BUCKET = 32
"""The encoder's positions are padded to a multiple of this many (positions no attention reads,
dropped at the end), and the clip's convolved frames to twice that: in bfloat16 every matrix
product and convolution is a oneDNN kernel compiled and kept for its shape, and the ~200
lengths of a call's clips kept 180 MB of them (the cue the same to float rounding)."""


def round_up(n: int, step: int) -> int:
    return -(-n // step) * step


PADDING_BLOCK_FRAMES = 8
"""The last mel frames of the window, convolved on their own: their positions give the padding's
one value and the window's last position (which also sees the convolution's zero border)."""


def convolved_positions(encoder: Any, features: Any, exact: int, keep: Any) -> Any:
    """Whisper's two convolutions (with their GELUs) at the encoder positions ``keep``
    (``[kept, width]``), before the positional embedding.

    Only the clip's frames and one block of padding frames are convolved. A position past
    ``exact`` sees only padding frames, which are one constant: so its output is the same vector
    for every such position but the window's last, whose second frame past it is the convolution's
    zero border. The two come from the last :data:`PADDING_BLOCK_FRAMES` frames, positions 2 and 3
    of their own convolution; the 30 s window's 3,000 frames took 0.02 CPU s a clip."""
    import torch
    from torch.nn.functional import gelu

    def convolved(frames: Any) -> Any:
        return gelu(encoder.conv2(gelu(encoder.conv1(frames)))).permute(0, 2, 1)[0]

    total = features.shape[-1] // 2
    if keep.numel() == total or 2 * exact + 2 * PADDING_BLOCK_FRAMES > features.shape[-1]:
        return convolved(features).index_select(0, keep)  # every position kept, or padding too short to share
    # a position p reads mel frames 2p - 2 ... 2p + 2: the clip's positions need the first 2 * exact + 1
    # (more frames, to a length shared by many clips, leave them as they are: see SHAPE_BUCKET)
    frames = min(features.shape[-1], round_up(2 * exact + 2, 2 * SHAPE_BUCKET))
    clip_part = convolved(features[..., :frames])[:exact]
    padding, last = convolved(features[..., -PADDING_BLOCK_FRAMES:])[2:4]
    past = keep[exact:]
    rows = padding.expand(len(past), -1).clone()
    rows[past == total - 1] = last
    return torch.cat([clip_part, rows])  # keep begins with the clip's positions 0 ... exact - 1


def merged_length(n_samples: int, group: int, total: int) -> int:
    """How many positions :func:`merged_padding_states` gives a clip of ``n_samples`` (16 kHz)
    in a window of ``total`` positions read in groups of ``group``; it grows with the clip."""
    exact = _exact_positions(n_samples, total)
    return exact + len(_padding_groups(exact, total, group))


def _padding_groups(exact: int, total: int, group: int) -> list[tuple[int, int]]:
    """``(first position, size)`` of each group of the padding after the clip's ``exact``
    positions: the first :data:`PADDING_ONE_BY_ONE` one by one, the rest in groups of ``group``
    (the last group what is left)."""
    near = min(total, exact + (PADDING_ONE_BY_ONE if group > 1 else 0))
    return [(a, 1) for a in range(exact, near)] + [(a, min(group, total - a)) for a in range(near, total, group)]


def _exact_positions(n_samples: int, total: int) -> int:
    """The encoder positions of a clip of ``n_samples`` kept one by one: its own and
    :data:`PADDING_MARGIN_POSITIONS` after it."""
    return min(total, math.ceil(n_samples / (2 * 160)) + PADDING_MARGIN_POSITIONS)  # 10 ms mel frames, 2 a position


__all__ = ["PADDING_GROUP", "PADDING_MARGIN_POSITIONS", "PADDING_ONE_BY_ONE", "SHAPE_BUCKET", "convolved_positions",
           "encoder_attention", "merged_length", "merged_padding_states", "round_up"]
