"""FutureActivityPredictor: shapes, causality, streaming, loss, save/load."""
import pytest
import torch

from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel, alibi_slopes


TINY = dict(hidden_size=32, num_attention_heads=2, intermediate_size=64, num_mel_bins=32, num_channel_layers=1, num_cross_layers=1)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return FutureActivityPredictorModel(FutureActivityPredictorConfig(**TINY)).eval()


def test_output_shapes(model):
    out = model(torch.randn(2, 2, 16000 * 2))
    assert out.logits.shape == (2, 100, 256)
    assert out.va_logits.shape == (2, 100, 2)
    assert torch.allclose(out.probs.sum(-1), torch.ones(2, 100), atol=1e-5)
    assert out.frame_times[0].item() == pytest.approx(0.02)


@pytest.mark.parametrize("channel", [0, 1])
def test_no_leakage_from_the_future(model, channel):
    torch.manual_seed(1)
    audio = torch.randn(1, 2, 16000 * 4)
    t = 120  # frame 120 ends at sample 121 * 320
    changed = audio.clone()
    changed[:, channel, (t + 1) * 320 :] = torch.randn_like(changed[:, channel, (t + 1) * 320 :]) * 3
    before, after = model(audio).probs[0], model(changed).probs[0]
    assert torch.equal(before[: t + 1], after[: t + 1])
    assert not torch.allclose(before[t + 1 :], after[t + 1 :])  # the change is seen afterwards


def test_streaming_matches_single_pass(model):
    torch.manual_seed(2)
    audio = torch.randn(2, 16000 * 6)
    full = model(audio.unsqueeze(0)).probs[0]
    streamed = model.predict_long(audio, window_s=3.0, context_s=2.0)
    assert streamed.shape == full.shape
    # frames beyond the attention span differ only by the (ALiBi-damped) far context
    assert torch.allclose(streamed, full, atol=1e-3)


def test_attention_bias_is_alibi_within_the_span_and_reused_for_shorter_windows():
    config = FutureActivityPredictorConfig(**TINY, max_context_frames=3)
    model = FutureActivityPredictorModel(config).eval()
    bias = model.attention_bias(5, torch.device("cpu"))
    slopes = alibi_slopes(config.num_attention_heads)
    assert bias.shape == (1, 2, 5, 5)
    for i in range(5):
        for j in range(5):
            expected = -slopes * (i - j) if 0 <= i - j < 3 else torch.full((2,), float("-inf"))
            assert torch.equal(bias[0, :, i, j], expected), (i, j)
    # a shorter window's bias is the corner of the longest one built; a longer one is built anew
    assert torch.equal(model.attention_bias(4, torch.device("cpu")), bias[:, :, :4, :4])
    assert model.attention_bias(4, torch.device("cpu")).data_ptr() == bias.data_ptr()
    assert torch.equal(model.attention_bias(7, torch.device("cpu"))[:, :, :5, :5], bias)


def test_weighted_loss_and_ignore_index(model):
    logits = torch.randn(1, 10, 256)
    labels = torch.randint(0, 256, (1, 10))
    labels[0, 5:] = -100
    plain = model.loss(logits, labels)
    reference = torch.nn.functional.cross_entropy(logits[0, :5], labels[0, :5])
    assert plain.item() == pytest.approx(reference.item(), rel=1e-6)
    weights = torch.ones(1, 10)
    weights[0, 0] = 5.0
    ce = torch.nn.functional.cross_entropy(logits[0, :5], labels[0, :5], reduction="none")
    expected = (ce * weights[0, :5]).sum() / weights[0, :5].sum()
    assert model.loss(logits, labels, weights).item() == pytest.approx(expected.item(), rel=1e-6)


def test_training_step_reduces_loss():
    torch.manual_seed(3)
    model = FutureActivityPredictorModel(FutureActivityPredictorConfig(**TINY, input_type="vad", dropout=0.0))
    va = torch.randint(0, 2, (2, 150, 2))
    labels = torch.randint(0, 256, (2, 150))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(15):
        loss = model(voice_activity=va, labels=labels, va_labels=va).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_vad_only_variant_is_causal():
    torch.manual_seed(4)
    model = FutureActivityPredictorModel(FutureActivityPredictorConfig(**TINY, input_type="vad")).eval()
    va = torch.randint(0, 2, (1, 200, 2))
    changed = va.clone()
    changed[0, 101:] = 1 - changed[0, 101:]
    assert torch.equal(model(voice_activity=va).probs[0, :101], model(voice_activity=changed).probs[0, :101])


def test_wrong_input_is_explained(model):
    with pytest.raises(ValueError, match="two channels"):
        model(torch.randn(1, 3, 16000))
    with pytest.raises(ValueError, match="voice_activity"):
        FutureActivityPredictorModel(FutureActivityPredictorConfig(**TINY, input_type="vad"))(input_values=torch.zeros(1, 2, 320))


def test_save_and_reload_safetensors(model, tmp_path):
    model.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").exists()
    reloaded = FutureActivityPredictorModel.from_pretrained(tmp_path).eval()
    audio = torch.randn(1, 2, 16000)
    assert torch.allclose(model(audio).probs, reloaded(audio).probs, atol=1e-6)


def test_timing_features_measure_onsets_ipus_and_pauses():
    from turneval.modeling.modeling_future_activity_predictor import SHARE_WINDOWS_S, channel_timing_features

    x = torch.zeros(1, 400)
    x[0, 50:150] = 1  # a 2 s IPU
    x[0, 200:220] = 1  # after a 1 s pause
    f = channel_timing_features(x, 50)[0]
    assert f.shape == (400, 5 + len(SHARE_WINDOWS_S))
    log = lambda s: float(torch.log1p(torch.tensor(s)))  # noqa: E731
    assert f[60, 0] == 1 and f[60, 1].item() == pytest.approx(log(0.2))  # 0.2 s since the onset
    assert f[150, 2].item() == pytest.approx(0.0) and f[150, 3].item() == pytest.approx(log(2.0))  # IPU of 2 s just ended
    assert f[205, 4].item() == pytest.approx(log(1.0))  # the last pause lasted 1 s
    assert f[149, 5].item() == 1.0 and f[170, 5].item() == 0.0  # share of the last 0.2 s


def test_timing_variant_is_causal_and_saves():
    torch.manual_seed(5)
    config = FutureActivityPredictorConfig(input_type="vad", vad_features="timing", hidden_size=16, num_attention_heads=2,
                                           conv_layers=2, conv_kernel_size=3, num_channel_layers=0, num_cross_layers=0)
    model = FutureActivityPredictorModel(config).eval()
    va = torch.randint(0, 2, (1, 300, 2))
    changed = va.clone()
    changed[0, 151:, 1] = 1 - changed[0, 151:, 1]
    before, after = model(voice_activity=va).probs[0], model(voice_activity=changed).probs[0]
    assert torch.equal(before[:151], after[:151]) and not torch.allclose(before[151:], after[151:])
    with pytest.raises(ValueError, match="vad_features"):
        FutureActivityPredictorConfig(input_type="vad", vad_features="mfcc")
