"""A message quotes the user's code (`one row of `timesteps``) and cuts a long quote with `...` at
a length that fits its sentence: 30 characters for a name in the middle of a sentence, 40 for an
expression. Pinned per kind of quote, with code whose names are longer than that."""

from __future__ import annotations

import textwrap

import pytest

from gpuadvisor import check_source

ROWS_OF_A_LONG_NAME = """
import torch
schedule = torch.linspace(999, 0, 1000, device="cuda").long()
for batch in loader:
    sampled_diffusion_timesteps_for_batch = torch.randint(0, 1000, (batch.shape[0],), device="cuda")
    indices = [(schedule == t).nonzero().item() for t in sampled_diffusion_timesteps_for_batch]
"""
PARAMETERS_OF_A_LONG_NAME = """
import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
online_q_network_for_polyak_updates = QNetwork().to(device)
qf_target = QNetwork().to(device)
for step in range(total_steps):
    train_step(online_q_network_for_polyak_updates, batch)
    for param, target_param in zip(online_q_network_for_polyak_updates.parameters(), qf_target.parameters()):
        target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
"""
WARM_UP_ON_A_LONG_FLAG = """
import time
import torch
def decode(model, tokens):
    return model(tokens).argmax(-1)
def benchmark(model, compile_with_max_autotune_and_graphs, num_samples):
    tokens = torch.randint(0, 32000, (1, 16), device="cuda")
    start = -1 if compile_with_max_autotune_and_graphs else 0
    for i in range(start, num_samples):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        y = decode(model, tokens)
        if i == -1:
            continue
        torch.cuda.synchronize()
        print(f"{y.size(-1) / (time.perf_counter() - t0):.02f} tokens/sec")
"""
COLD_CALL_ON_A_LONG_NAME = """
import time
import torch
high_resolution_input_image_batch = torch.randn(8192, 8192, device="cuda")
torch.cuda.synchronize()
t0 = time.perf_counter()
y = torch.fft.fft2(high_resolution_input_image_batch)
torch.cuda.synchronize()
print("fft2 took", time.perf_counter() - t0)
"""


@pytest.mark.parametrize(
    ("code", "rule", "quoted"),
    [
        (ROWS_OF_A_LONG_NAME, "GPU301", "each on one row of `sampled_diffusion_timesteps...`"),
        (PARAMETERS_OF_A_LONG_NAME, "GPU301", "over the parameters of `online_q_network_for_polyak...`"),
        (WARM_UP_ON_A_LONG_FLAG, "GPU402", "skipped only when `compile_with_max_autotune_a...`"),
        (COLD_CALL_ON_A_LONG_NAME, "GPU402", "runs `torch.fft.fft2(high_resolution_input_...`"),
    ],
)
def test_a_long_quote_is_cut_to_the_length_its_sentence_allows(code: str, rule: str, quoted: str) -> None:
    (finding,) = check_source(textwrap.dedent(code).lstrip("\n"), select=rule)
    assert quoted in finding.message, finding.message
