"""Whisper's cue with the padding after the clip read in groups (turneval.whisper_merged_encoder) and its
decoding a clip a row (turneval.whisper_decoder_state)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from turneval.whisper_completion import CONTINUE_MARKS, END_MARKS, WhisperCompletion, _mark_ids
from turneval.whisper_decoder_state import DENSE_ROWS, DecoderState
from turneval.whisper_merged_encoder import (
    PADDING_MARGIN_POSITIONS,
    PADDING_ONE_BY_ONE,
    convolved_positions,
    encoder_attention,
    merged_length,
    merged_padding_states,
)


torch = pytest.importorskip("torch")
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="module")
def exact_reader():
    return WhisperCompletion(padding_group=1, precision="float32")


@pytest.fixture(scope="module")
def clip():
    from turneval.dataset_scripts.audio import load_audio

    return load_audio(EXAMPLES / "human_like.wav")[0][0, 16000 * 3 : 16000 * 8]


def _features(reader, clip):
    return reader.processor.feature_extractor([clip], sampling_rate=16000, return_tensors="pt").input_features


def test_groups_of_one_are_the_encoder_itself(exact_reader, clip):
    features = _features(exact_reader, clip)
    with torch.inference_mode():
        states, bias = merged_padding_states(exact_reader.encoder, features, len(clip), 1)
        reference = exact_reader.encoder(features).last_hidden_state[0]
    assert states.shape == reference.shape and float(bias.abs().max()) == 0.0
    # the same to float rounding: 1,500 positions are padded to 1,504 (SHAPE_BUCKET), which moves
    # how the matrix products block their sums (states reach 12)
    assert torch.allclose(states, reference, atol=5e-4)


def test_groups_keep_the_clip_and_count_the_padding(exact_reader, clip):
    features = _features(exact_reader, clip)
    exact = math.ceil(len(clip) / 320) + PADDING_MARGIN_POSITIONS
    near = exact + PADDING_ONE_BY_ONE  # the padding next to the speech, one by one
    with torch.inference_mode():
        states, bias = merged_padding_states(exact_reader.encoder, features, len(clip), 4)
    assert states.shape[0] == near + math.ceil((1500 - near) / 4) == merged_length(len(clip), 4, exact_reader.window_positions)
    assert merged_length(len(clip) + 16000, 4, 1500) > states.shape[0]  # a longer clip, more positions: the longest bounds a batch
    assert merged_length(len(clip), 1, 1500) == 1500
    assert float(bias[:near].abs().max()) == 0.0 and float(bias[near]) == pytest.approx(math.log(4))
    # every position of the window is counted once: the counts add up to 1,500
    assert float(torch.exp(bias).sum()) == pytest.approx(1500.0)
    # a decoding row takes a clip's states: the positions after them are absent (count 0), and a
    # row's earlier clip leaves nothing behind
    state = DecoderState.empty(exact_reader.model, 2, 1024, 6, exact_reader.cross_weights, states.dtype, "cpu")
    assert state.dense_rows == DENSE_ROWS and state.states.shape == (2, 1024, states.shape[1])
    state.keys[0][1] += 1.0
    state.load(1, states[:10], bias[:10])
    state.load(0, states, bias)
    assert torch.equal(state.states[0, : states.shape[0]], states) and torch.equal(state.states_t[0], state.states[0].T)
    assert torch.isinf(state.key_bias[1, 0, 10:]).all() and torch.isinf(state.key_bias[0, 0, states.shape[0] :]).all()
    assert not state.states[1, 10:].any() and not state.keys[0][1].any()
    with pytest.raises(ValueError, match="does not fit"):
        state.load(0, torch.zeros(1025, states.shape[1]), torch.zeros(1025))


def test_the_report_reads_groups_close_to_the_exact_window(exact_reader, clip):
    paired = WhisperCompletion(model=exact_reader.model, processor=exact_reader.processor)
    assert paired.padding_group == 4
    values = paired.logits([clip, clip[: 16000 * 2]])
    exact = exact_reader.logits([clip, clip[: 16000 * 2]])
    assert np.isfinite(values).all() and np.max(np.abs(values - exact)) < 2.0
    # a clip's cue does not depend on the clips decoded beside it
    assert paired.logits([clip])[0] == pytest.approx(values[0], abs=1e-4)
    with pytest.raises(ValueError, match="padding_group"):
        WhisperCompletion(model=exact_reader.model, processor=exact_reader.processor, padding_group=0)


def test_a_row_that_ends_takes_the_next_clip_and_each_cue_is_the_clips_alone(exact_reader, clip, monkeypatch):
    """Two rows for five clips: rows that end take the next clip at once and feed its prompt while
    the other row goes on (rows at different positions); every cue is the one its clip gets alone."""
    reader = WhisperCompletion(model=exact_reader.model, processor=exact_reader.processor, batch_size=2)
    clips = [clip[: 16000 * 2], clip, clip[16000:], clip[: 16000 * 3], clip[8000:40000]]
    together = reader.logits(clips)
    alone = np.array([reader.logits([c])[0] for c in clips])
    assert np.isfinite(alone).all()
    np.testing.assert_allclose(together, alone, atol=1e-4)
    steps = []
    step = DecoderState.step

    def counted(self, ids, position, logits=True):
        steps.append(position)
        return step(self, ids, position, logits)

    monkeypatch.setattr(DecoderState, "step", counted)
    reader.logits(clips)
    assert any(len(set(p.tolist())) > 1 for p in steps)  # rows did decode at different positions


def test_features_made_from_the_clip_alone_are_the_whole_windows(exact_reader, clip):
    for part in (clip, clip[:16000], clip[:4001]):
        made = exact_reader._features(part)
        assert made.shape == (1, 80, 3000)
        assert torch.equal(made, _features(exact_reader, part))


def test_lengths_padded_to_a_shared_shape_leave_the_states_as_they_are(exact_reader, clip, monkeypatch):
    import turneval.whisper_merged_encoder as merged_encoder

    for part in (clip, clip[:16000], clip[:4001]):
        features = _features(exact_reader, part)
        with torch.inference_mode():
            bucketed, bias = merged_padding_states(exact_reader.encoder, features, len(part), 4)
            monkeypatch.setattr(merged_encoder, "SHAPE_BUCKET", 1)
            exact, exact_bias = merged_padding_states(exact_reader.encoder, features, len(part), 4)
            monkeypatch.undo()
        assert bucketed.shape == exact.shape and torch.equal(bias, exact_bias)
        assert torch.allclose(bucketed, exact, atol=5e-4)  # float rounding (states reach 12)


def test_the_padding_is_convolved_once(exact_reader, clip):
    from torch.nn.functional import gelu

    encoder = exact_reader.encoder
    features = _features(exact_reader, clip[:16000])
    exact = math.ceil(16000 / 320) + PADDING_MARGIN_POSITIONS
    keep = torch.tensor(list(range(exact)) + [exact, exact + 1, 700, 1498, 1499])
    with torch.inference_mode():
        whole = gelu(encoder.conv2(gelu(encoder.conv1(features)))).permute(0, 2, 1)[0]
        made = convolved_positions(encoder, features, exact, keep)
    assert made.shape == (len(keep), whole.shape[1])
    assert torch.allclose(made, whole.index_select(0, keep), atol=1e-4)
    # the window's last position sees the convolution's border: it is not the padding's value
    assert not torch.allclose(whole[1499], whole[1498], atol=1e-3)


def test_the_bfloat16_encoder_attention_is_the_fused_kernels_to_its_rounding():
    """The three bfloat16 products of the cue's encoder attention against the float32 fused kernel,
    with merged positions counted twice and absent ones (-inf) never read."""
    from torch.nn.functional import scaled_dot_product_attention

    generator = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 6, 96, 64, generator=generator) * 0.5 for _ in range(3))
    mask = torch.zeros(96)
    mask[60:90] = math.log(2.0)
    mask[90:] = float("-inf")
    mask = mask[None, None, None, :]
    reference = scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1.0)
    assert torch.equal(encoder_attention(q, k, v, mask), reference)  # float32: the fused kernel itself
    made = encoder_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), mask.bfloat16())
    assert made.dtype == torch.bfloat16 and made.shape == reference.shape
    assert torch.allclose(made.float(), reference, atol=0.03)
    v_absent = v.clone()
    v_absent[..., 90:, :] = 1e4  # what the absent positions hold never reaches the output
    assert torch.equal(encoder_attention(q.bfloat16(), k.bfloat16(), v_absent.bfloat16(), mask.bfloat16()), made)


def test_the_marks_are_found_without_decoding_the_whole_vocabulary(exact_reader):
    tokenizer = exact_reader.processor.tokenizer
    vocab = tokenizer.get_vocab()
    for marks in (END_MARKS, CONTINUE_MARKS):
        every = sorted(i for token, i in vocab.items() if tokenizer.convert_tokens_to_string([token]).strip() in marks)
        assert _mark_ids(tokenizer, vocab, marks) == every and every


def test_the_decoder_reads_the_encoder_query_side_as_keys_and_values_would(exact_reader):
    """(q W_k) E^T and (softmax E) W_v^T + b_v: the same attention as projecting E's keys and values."""
    generator = torch.Generator().manual_seed(0)
    encoded = torch.randn(2, 40, 384, generator=generator)
    bias = torch.zeros(2, 40)
    bias[1, 30:] = float("-inf")  # the second row is shorter: its last positions are absent
    bias[0, 20:] = math.log(2.0)  # merged padding: counted twice
    state = DecoderState(exact_reader.model, encoded, 8, exact_reader.cross_weights, bias)
    layer = exact_reader.model.model.decoder.layers[1].encoder_attn
    q = torch.randn(2, layer.num_heads, layer.head_dim, generator=generator)
    with torch.inference_mode():
        made = state._cross_attend(q, exact_reader.cross_weights[1])
        keys = layer.k_proj(encoded).view(2, 40, layer.num_heads, layer.head_dim).transpose(1, 2)
        values = layer.v_proj(encoded).view(2, 40, layer.num_heads, layer.head_dim).transpose(1, 2)
        weights = torch.softmax(torch.einsum("rhd,rhpd->rhp", q, keys) + bias[:, None, :], dim=-1)
        reference = torch.einsum("rhp,rhpd->rhd", weights, values).reshape(2, -1)
    assert torch.allclose(made, reference, atol=1e-4)
    state.keep([1])
    kept = torch.cat([q[1:], torch.zeros_like(q[:1])])  # the query keeps its dense rows, the one decoding first
    with torch.inference_mode():
        assert torch.allclose(state._cross_attend(kept, exact_reader.cross_weights[1])[:1], reference[1:], atol=1e-4)


def test_a_decoding_row_does_not_depend_on_the_rows_beside_it(exact_reader):
    """Every float32 product of a step runs on DENSE_ROWS rows and the states are read in
    bfloat16 row by row: a row's buffers are the same bit for bit beside other rows, fewer rows,
    or longer ones (absent positions), so a clip's cue does not depend on its batch."""
    generator = torch.Generator().manual_seed(1)
    encoded = torch.randn(4, 64, 384, generator=generator).bfloat16()
    longer = torch.cat([encoded[:1], torch.randn(1, 64, 384, generator=generator).bfloat16()], dim=1)
    bias = torch.zeros(4, 64)
    longer_bias = torch.cat([bias[:1], torch.full((1, 64), float("-inf"))], dim=1)  # the same row, absent positions after it
    states = [DecoderState(exact_reader.model, e, 6, exact_reader.cross_weights, b, dense_rows=DENSE_ROWS)
              for e, b in ((encoded, bias), (encoded[[0, 3]], bias[[0, 3]]), (longer, longer_bias))]
    with torch.inference_mode():
        for position, token in enumerate([50257, 50362, 383, 3797]):
            for state in states:
                state.step(torch.full((state.rows,), token), position, logits=False)
    for layer in range(len(states[0].keys)):
        for other in states[1:]:
            assert torch.equal(other.keys[layer][0], states[0].keys[layer][0])
            assert torch.equal(other.values[layer][0], states[0].values[layer][0])
