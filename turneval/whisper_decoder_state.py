"""Whisper's decoder one token a row a step: the greedy decoding of Whisper's turn-completion cue
(:meth:`turneval.whisper_completion.WhisperCompletion._decode`).

:class:`DecoderState` keeps the decoder's self-attention buffers itself and reads the encoder's
states query-side (:class:`CrossWeights`), a clip a row, each row at its own position. Every
float32 matrix product of a step runs on :data:`DENSE_ROWS` rows, so a row's values never depend
on the rows decoding beside it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from turneval.whisper_merged_encoder import round_up


DENSE_ROWS = 8
"""Each decoding step's float32 matrix products run on a multiple of this many rows, whatever
number of clips decode together: a product's kernel, and so its rounding, depends on its row
count, and the cross-attention's bfloat16 reading of the encoder's states magnified that to 3e-3
of a clip's cue between batches. At a fixed row count a row's values do not depend on its
neighbours or its place (checked bit for bit), so a clip's cue is the same in any batch of up to
this many clips."""


@dataclass(frozen=True)
class CrossWeights:
    """One decoder layer's cross-attention key and value projections, per head, as the
    query-side reading of the encoder's states uses them (:class:`DecoderState`)."""

    keys: Any  # [heads, head_dim, width]: W_k of each head
    values: Any  # [heads, width, head_dim]: W_v of each head, transposed
    value_bias: Any  # [heads, head_dim] or None

    @classmethod
    def of(cls, attention: Any) -> "CrossWeights":
        # a key bias would add the same q . b_k to every position's score, which the softmax ignores
        heads, head_dim = attention.num_heads, attention.head_dim
        width = attention.k_proj.weight.shape[1]
        value_bias = attention.v_proj.bias
        return cls(attention.k_proj.weight.detach().float().view(heads, head_dim, width),
                   attention.v_proj.weight.detach().float().view(heads, head_dim, width).transpose(1, 2).contiguous(),
                   None if value_bias is None else value_bias.detach().float().view(heads, head_dim))


class DecoderState:
    """Whisper's decoder, one token a row a step, over its own buffers: the self-attention's keys
    and values filled step by step, the encoder's states read by the cross-attention query-side.
    The same arithmetic as transformers' ``WhisperDecoder`` (pre-norm layers, learned positions),
    without its per-step cache and mask bookkeeping, which costs more than the step itself.

    Query-side: with E the encoder's states, a head's scores ``q (E W_k)^T`` are ``(q W_k) E^T``
    and its output ``softmax (E W_v^T + b_v)`` is ``(softmax E) W_v^T + b_v`` (the weights add up to
    1). Projecting E's ~900 positions through the 8 key and value matrices costs a clip 1 GMAC
    and 12 MB of keys and values; two products with E a step cost its ~12 steps a fifth of that,
    and hold only E (1.3 MB). The same values to float rounding (2e-5 of the cue on 64 dev clips)."""

    def __init__(self, model: Any, encoded: Any, max_tokens: int, cross_weights: Sequence[CrossWeights], key_bias: Any,
                 dense_rows: int | None = None) -> None:
        import torch

        decoder = model.model.decoder
        self.decoder, self.head = decoder, model.proj_out
        first = decoder.layers[0].self_attn
        self.heads, self.head_dim = first.num_heads, first.head_dim
        n, self.width = encoded.shape[0], encoded.shape[-1]
        self.dense_rows = max(n, int(dense_rows or n))
        self.cross_weights = cross_weights
        # the encoder's states in its own precision: bfloat16 halves what every step reads of them,
        # and a bfloat16 product of a row does not depend on the rows beside it
        self.states = encoded  # [rows, positions, width]
        self.states_t = self.states.transpose(1, 2).contiguous()  # [rows, width, positions]: a strided view would be copied at every step
        shape = (n, self.heads, max_tokens, self.head_dim)
        self.keys = [torch.zeros(shape, device=encoded.device) for _ in decoder.layers]
        self.values = [torch.zeros(shape, device=encoded.device) for _ in decoder.layers]
        self.key_bias = key_bias.float()[:, None, :]  # [rows, 1, positions]: each position's log count (-inf: absent)

    @property
    def rows(self) -> int:
        """The rows still decoding."""
        return self.keys[0].shape[0]

    def _dense(self, h: Any) -> Any:
        """``h`` (``[rows, ...]``) padded with zero rows to :attr:`dense_rows`: every float32 matrix
        product of a step runs on that many rows, so a row's values do not depend on how many rows
        decode beside it (a product's kernel, and its rounding, depends on the row count; a
        bfloat16 reading of the states magnified that to 3e-3 of the cue)."""
        import torch

        if h.shape[0] == self.dense_rows:
            return h
        return torch.cat([h, h.new_zeros((self.dense_rows - h.shape[0], *h.shape[1:]))])

    def keep(self, rows: Sequence[int]) -> None:
        """Only these rows go on decoding."""
        import torch

        index = torch.tensor(rows, dtype=torch.long, device=self.keys[0].device)
        self.states = self.states.index_select(0, index)
        self.states_t = self.states_t.index_select(0, index)
        self.keys = [k.index_select(0, index) for k in self.keys]
        self.values = [v.index_select(0, index) for v in self.values]
        self.key_bias = self.key_bias.index_select(0, index)

    @classmethod
    def empty(cls, model: Any, rows: int, positions: int, max_tokens: int, cross_weights: Sequence[CrossWeights], dtype: Any,
              device: Any) -> "DecoderState":
        """A state of ``rows`` rows, each to be given a clip's states of up to ``positions``
        positions (:meth:`load`); its products run on at least :data:`DENSE_ROWS` rows. A row
        without a clip reads zeros."""
        import torch

        width = model.model.decoder.layers[0].self_attn.embed_dim
        return cls(model, torch.zeros(rows, positions, width, dtype=dtype, device=device), max_tokens, cross_weights,
                   torch.zeros(rows, positions, device=device), dense_rows=round_up(rows, DENSE_ROWS))

    def load(self, row: int, states: Any, key_bias: Any) -> None:
        """Row ``row`` decodes a new clip from its first token on: its encoder states
        ``[positions, width]`` and each position's log count; the positions after them are absent
        (a log count of -inf: no attention), so a row's values do not depend on the length."""
        n = states.shape[0]
        if n > self.states.shape[1]:
            raise ValueError(f"a clip of {n} encoder positions does not fit rows of {self.states.shape[1]}")
        self.states[row].zero_()
        self.states[row, :n] = states
        self.states_t[row] = self.states[row].T
        self.key_bias[row].fill_(float("-inf"))
        self.key_bias[row, 0, :n] = key_bias.float()
        for buffer in (*self.keys, *self.values):
            buffer[row].zero_()

    def step(self, ids: Any, position: Any, logits: bool = True) -> Any:
        """The next-token logits ``[rows, vocab]`` after token ``ids`` (one a row) at ``position``
        (one for every row, or ``[rows]``: each row's own); with ``logits=False`` only the buffers
        are filled (a prompt token: its vocabulary projection, 80 MB of weights read, would go
        unread) and None is returned."""
        import torch

        d, n = self.decoder, ids.shape[0]
        positions = torch.as_tensor(position, device=ids.device).expand(n)
        # every row attends over the whole buffer, its later positions masked: the sums over the
        # positions then run the same way for a row whatever the positions of the rows beside it
        later = torch.arange(self.keys[0].shape[2], device=ids.device)[None, :] > positions[:, None]
        self_bias = torch.zeros(later.shape, device=ids.device).masked_fill(later, float("-inf"))[:, None, None, :]
        rows = torch.arange(n, device=ids.device)
        h = self._dense(d.embed_tokens(ids) + d.embed_positions.weight[positions])  # [dense_rows, width]
        for i, layer in enumerate(d.layers):
            a = layer.self_attn
            x = layer.self_attn_layer_norm(h)
            self.keys[i][rows, :, positions] = a.k_proj(x)[:n].view(-1, self.heads, self.head_dim)
            self.values[i][rows, :, positions] = a.v_proj(x)[:n].view(-1, self.heads, self.head_dim)
            q = (a.q_proj(x) * a.scaling)[:n].view(-1, self.heads, 1, self.head_dim)
            attended = self._attend(q, self.keys[i].transpose(-1, -2), self.values[i], self_bias)
            h = h + a.out_proj(self._dense(attended))
            c = layer.encoder_attn
            q = (c.q_proj(layer.encoder_attn_layer_norm(h)) * c.scaling).view(-1, self.heads, self.head_dim)
            h = h + c.out_proj(self._cross_attend(q, self.cross_weights[i]))
            h = h + layer.fc2(layer.activation_fn(layer.fc1(layer.final_layer_norm(h))))
        # the vocabulary projection on the rows decoding only: it feeds no bfloat16 rounding, and
        # its float32 rounding moves a cue by 1e-5 at most
        return self.head(d.layer_norm(h[:n])) if logits else None

    def _attend(self, q: Any, keys_t: Any, v: Any, bias: Any) -> Any:
        """Attention of one query a row over ``keys_t`` (``[rows, heads, head_dim, time]``) and ``v``,
        ``bias`` (``[rows, 1, 1, time]``) added to the scores."""
        import torch

        return (torch.softmax(q @ keys_t + bias, dim=-1) @ v).reshape(-1, self.width)

    def _cross_attend(self, q: Any, weights: CrossWeights) -> Any:
        """Cross-attention of one query a row (``[dense_rows, heads, head_dim]``) over the encoder's
        states, query-side (see the class), each position's log count added to its scores.

        The two products with the states run in their precision (bfloat16 where the encoder ran
        in it: half the bytes read, r = 0.99997 with float32 on the 248 real dev pauses), the
        softmax and everything else in float32. The rows past those decoding read nothing (their
        output is the value bias alone, and nothing reads it)."""
        import torch

        n, low = self.rows, self.states.dtype
        key_side = torch.einsum("rhd,hdw->rhw", q, weights.keys)[:n]  # on dense_rows rows, like every float32 product
        scores = torch.bmm(key_side.to(low), self.states_t).float()  # [rows, heads, positions]
        attention = torch.softmax(scores + self.key_bias, dim=-1)
        read = self._dense(torch.bmm(attention.to(low), self.states).float())
        out = torch.einsum("rhw,hwd->rhd", read, weights.values)
        if weights.value_bias is not None:
            out = out + weights.value_bias
        return out.reshape(-1, self.width)


__all__ = ["CrossWeights", "DENSE_ROWS", "DecoderState"]
