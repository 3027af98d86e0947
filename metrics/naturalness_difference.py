"""Is one system's naturalness m different from another's beyond the noise? A bootstrap over boundary units.

m (TurnNat, :mod:`turneval.metrics.naturalness_score`) of one conversation is a statistic of its
boundary units' NLLs (mean and worst-quarter mean). Two systems' m differ by chance when they
were measured on few units, so the difference gets a percentile-bootstrap interval that
resamples what m is made of: conversations (when a system has several) and, inside each
conversation drawn, its units. A system's m is the mean of its conversations' m, as
``turneval compare`` reports it.

    >>> a = [[1.0, 1.2, 0.9, 1.1] * 10]
    >>> b = [[2.0, 2.4, 1.8, 2.2] * 10]
    >>> d = bootstrap_m_difference(a, b, n_resamples=200)
    >>> round(d.difference, 3), d.low < d.difference < d.high < 0
    (-1.125, True)
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from .naturalness_score import LAMBDA_MEAN, TAIL_GAMMA, aggregate_unit_nll, tail_count


@dataclass(frozen=True)
class MDifference:
    """m of B minus m of A with its percentile-bootstrap interval and what it rests on."""

    difference: float
    low: float
    high: float
    m_a: float
    m_b: float
    n_units_a: int
    n_units_b: int
    n_conversations_a: int
    n_conversations_b: int
    n_resamples: int
    confidence: float

    @property
    def beyond_noise(self) -> bool:
        """The interval excludes 0."""
        return self.low > 0 or self.high < 0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "beyond_noise": self.beyond_noise}


def _conversation_draws(units: np.ndarray, n_resamples: int, rng: np.random.Generator, gamma: float, lam: float) -> np.ndarray:
    """``n_resamples`` values of one conversation's m, its units resampled with replacement."""
    n = units.size
    drawn = np.sort(units[rng.integers(0, n, size=(n_resamples, n))], axis=1)
    k = tail_count(n, gamma)
    return -(lam * drawn.mean(axis=1) + (1.0 - lam) * drawn[:, -k:].mean(axis=1))


def _system_draws(conversations: list[np.ndarray], n_resamples: int, rng: np.random.Generator, gamma: float, lam: float) -> np.ndarray:
    draws = np.stack([_conversation_draws(c, n_resamples, rng, gamma, lam) for c in conversations])  # [conversations, resamples]
    if len(conversations) == 1:
        return draws[0]
    # two stages: conversations drawn with replacement, each with its own unit resample
    pick = rng.integers(0, len(conversations), size=(n_resamples, len(conversations)))
    return draws[pick, np.arange(n_resamples)[:, None]].mean(axis=1)


def _checked(system: Sequence[Sequence[float]], name: str) -> list[np.ndarray]:
    out = [np.asarray([x for x in conv if math.isfinite(x)], dtype=np.float64) for conv in system]
    out = [c for c in out if c.size]
    if not out:
        raise ValueError(f"system {name} has no scored boundary unit: its m is undefined, so there is nothing to compare")
    return out


def bootstrap_m_difference(
    units_a: Sequence[Sequence[float]],
    units_b: Sequence[Sequence[float]],
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    gamma: float = TAIL_GAMMA,
    lam: float = LAMBDA_MEAN,
) -> MDifference:
    """m(B) - m(A) and its percentile-bootstrap interval.

    Args:
        units_a, units_b: per conversation of each system, its boundary units' NLLs (a report's
            ``naturalness["units"][i]["unit_nll"]``); conversations without a unit are left out.
        n_resamples, confidence, seed: the bootstrap (deterministic per seed).
        gamma, lam: TurnNat's tail fraction and mean weight (the defaults of the score).

    Raises:
        ValueError: when a system has no scored unit at all.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    a, b = _checked(units_a, "A"), _checked(units_b, "B")
    m_a = float(np.mean([aggregate_unit_nll(c, gamma, lam).nat_score for c in a]))
    m_b = float(np.mean([aggregate_unit_nll(c, gamma, lam).nat_score for c in b]))
    rng = np.random.default_rng(seed)
    draws = _system_draws(b, n_resamples, rng, gamma, lam) - _system_draws(a, n_resamples, rng, gamma, lam)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(draws, [alpha, 1.0 - alpha])
    return MDifference(m_b - m_a, float(low), float(high), m_a, m_b, int(sum(c.size for c in a)), int(sum(c.size for c in b)),
                       len(a), len(b), int(n_resamples), float(confidence))


def difference_sentence(d: MDifference, human_sd: float | None = None, human_n: int | None = None) -> str:
    """One plain sentence on ``d`` (and, given the spread of m between real human conversations
    measured with the same predictor, how the difference compares with it)."""
    higher, lower = ("B", "A") if d.difference > 0 else ("A", "B")
    pct = f"{100 * d.confidence:g} %"
    head = (f"Naturalness m: B - A = {d.difference:+.3f} ({pct} CI {d.low:+.3f} to {d.high:+.3f}, resampling "
            f"{d.n_units_a} + {d.n_units_b} boundary units in {d.n_conversations_a} + {d.n_conversations_b} conversations): ")
    if d.beyond_noise:
        text = head + f"{higher} takes turns more naturally than {lower} beyond the sampling noise."
    else:
        text = head + "the interval includes 0, so the two systems do not differ beyond the sampling noise."
    if human_sd is not None and math.isfinite(human_sd) and human_sd > 0:
        ratio = abs(d.difference) / human_sd
        spread = f"the spread of m between real human conversations scored by this predictor (sd {human_sd:.2f}" + (f" over {human_n})" if human_n else ")")
        text += (f" That is {ratio:.1f} times {spread}." if ratio >= 1
                 else f" That is smaller than {spread}: real conversations differ that much among themselves.")
    return text
