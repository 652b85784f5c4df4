"""Simulated other CPUs: a draw moves every initial weight by one float32 ulp, the same way for
models built alike, and leaves the random streams alone."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from torch import nn

from transformer_course import Transformer, TransformerConfig, draws
from transformer_course.experiments.ch1_why_attention.recurrence import ElmanRNN
from transformer_course.experiments.ch2_scaled_dot_product_attention.score_functions import (
    RetrievalModel,
    ScoreComparisonConfig,
)

CONFIG = TransformerConfig(11, 11, d_model=16, num_heads=2, num_encoder_layers=1,
                           num_decoder_layers=1, d_ff=32, max_len=12)


@pytest.fixture
def draw(monkeypatch):
    """Draw 7 installed for the test, this CPU as it is afterwards."""
    monkeypatch.setenv(draws.DRAW_ENV, "7")
    draws.install(7)
    yield 7
    draws.install(None)


def build(make, seed: int = 0) -> dict[str, torch.Tensor]:
    torch.manual_seed(seed)
    return {name: p.detach().clone() for name, p in make().named_parameters()}


def ulps_moved(before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
    """How many float32 steps each entry moved (0 where it did not)."""
    b, a = before.float().view(torch.int32), after.float().view(torch.int32)
    return (a.long() - b.long()).abs()


MODELS = {
    "Transformer": lambda: Transformer(CONFIG),
    "ElmanRNN": lambda: ElmanRNN(5, 6),
    "nn.LSTM": lambda: nn.LSTM(5, 6),
    "nn.RNN": lambda: nn.RNN(5, 6),
    "RetrievalModel": lambda: RetrievalModel("additive", 8, ScoreComparisonConfig(num_seeds=2),
                                             torch.Generator().manual_seed(0)),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_draw_moves_every_nonzero_initial_weight_by_one_ulp(name):
    plain = build(MODELS[name])
    draws.install(7)
    try:
        moved = build(MODELS[name])
    finally:
        draws.install(None)
    assert plain.keys() == moved.keys()
    for key in plain:
        nonzero = plain[key] != 0
        steps = ulps_moved(plain[key], moved[key])
        assert (steps[nonzero] == 1).all(), key
        assert (moved[key][~nonzero] == 0).all(), key


def test_models_built_alike_stay_alike_and_the_random_stream_is_untouched(draw):
    first, second = build(MODELS["Transformer"]), build(MODELS["Transformer"])
    assert all(torch.equal(first[k], second[k]) for k in first)
    torch.manual_seed(3)
    Transformer(CONFIG)
    after_draw = torch.rand(4)
    draws.install(None)
    torch.manual_seed(3)
    Transformer(CONFIG)
    assert torch.equal(after_draw, torch.rand(4))


def test_a_draw_leaves_a_model_on_the_meta_device_buildable(draw):
    with torch.device("meta"):
        model = Transformer(CONFIG)  # nothing to move: counting parameters still works
    assert all(p.is_meta for p in model.parameters())
    assert sum(p.numel() for p in model.parameters()) == sum(
        v.numel() for v in build(MODELS["Transformer"]).values())


def test_two_draws_are_two_cpus():
    draws.install(1)
    try:
        one = build(MODELS["Transformer"])
        draws.install(2)
        two = build(MODELS["Transformer"])
    finally:
        draws.install(None)
    differing = sum(int((one[k] != two[k]).sum()) for k in one)
    assert differing > 0.3 * sum(v.numel() for v in one.values())


def test_the_package_reads_the_draw_from_the_environment_on_import():
    probe = ("import torch, transformer_course.draws as d; import transformer_course; "
             "print(d.installed()); torch.manual_seed(0); "
             "print(torch.nn.Linear(3, 3).weight.sum().item())")
    runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           check=True, env=env).stdout.split()
            for env in ({"PATH": ""}, {"PATH": "", draws.DRAW_ENV: "5"})]
    assert runs[0][0] == "None" and runs[1][0] == "5"
    assert runs[0][1] != runs[1][1]


@pytest.mark.parametrize("raw", ["0", "-2", "two", "1.5"])
def test_a_draw_must_be_a_positive_integer(monkeypatch, raw):
    monkeypatch.setenv(draws.DRAW_ENV, raw)
    with pytest.raises(ValueError, match=draws.DRAW_ENV):
        draws.current_draw()
