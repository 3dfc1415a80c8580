"""The behaviour-changing fixes (`--unsafe-fixes`): hoisting a copy, accumulating on the device,
a warm-up call, random draws on the device, processes for threads.

Each fix parses, removes its finding and leaves every other byte alone; where the rewrite is
not well-defined (the accumulator read inside the loop, data handed to unknown code, a timed
region of several statements, ...) no fix is offered and the finding stays.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from gpuadvisor import check_source
from gpuadvisor.analysis.rules import ALL_RULES
from gpuadvisor.fixes import fix_text
from gpuadvisor.fixes.context import FixContext
from gpuadvisor.fixes.fixers import FIXERS

REPO = Path(__file__).resolve().parent.parent


def findings_of(text: str, rule: str) -> list[tuple[int, str]]:
    return [(f.line, f.rule) for f in check_source(text, "f.py", select=rule)]


def code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


#: name -> (rule, code, the whole fixed code)
CASES = {
    "hoist-copy": (
        "GPU101",
        code(
            """
            import torch
            device = torch.device("cuda")
            mask = torch.ones(512, 512)

            # score every batch
            for x in loader:
                out = model(x.to(device)) * mask.to(device)  # scaled
            """
        ),
        code(
            """
            import torch
            device = torch.device("cuda")
            mask = torch.ones(512, 512)

            # score every batch
            mask_gpu = mask.to(device)
            for x in loader:
                out = model(x.to(device)) * mask_gpu  # scaled
            """
        ),
    ),
    "hoist-copy-out-of-every-loop-it-does-not-change-in": (
        "GPU101",
        code(
            """
            import torch
            dev = torch.device("cuda")
            mask = torch.ones(512, 512)
            for epoch in range(10):
                for x in loader:
                    out = model(x.to(dev)) * mask.to(dev)
            """
        ),
        code(
            """
            import torch
            dev = torch.device("cuda")
            mask = torch.ones(512, 512)
            mask_gpu = mask.to(dev)
            for epoch in range(10):
                for x in loader:
                    out = model(x.to(dev)) * mask_gpu
            """
        ),
    ),
    "hoist-copy-out-of-no-grad-in-a-function": (
        "GPU101",
        code(
            """
            import torch
            def evaluate(model, X_val, device):
                for epoch in range(50):
                    with torch.no_grad():
                        X_gpu = X_val.to(device)
                        print(model(X_gpu).mean())
            """
        ),
        code(
            """
            import torch
            def evaluate(model, X_val, device):
                X_val_gpu = X_val.to(device)
                for epoch in range(50):
                    with torch.no_grad():
                        X_gpu = X_val_gpu
                        print(model(X_gpu).mean())
            """
        ),
    ),
    "hoist-copy-to-host": (
        "GPU101",
        code(
            """
            import cupy as cp
            table = cp.arange(1000)
            while pending:
                host = cp.asnumpy(table)
                pending = step(host)
            """
        ),
        code(
            """
            import cupy as cp
            table = cp.arange(1000)
            table_host = cp.asnumpy(table)
            while pending:
                host = table_host
                pending = step(host)
            """
        ),
    ),
    "accumulate-weighted-loss": (
        "GPU201",
        code(
            """
            import torch
            device = "cuda" if torch.cuda.is_available() else "cpu"
            model = Net().to(device)
            running = 0.0
            for x, y in loader:
                loss = criterion(model(x.to(device)), y.to(device))
                loss.backward()
                running += loss.item() * x.size(0)  # weighted by batch size
            print(running / len(dataset))
            """
        ),
        code(
            """
            import torch
            device = "cuda" if torch.cuda.is_available() else "cpu"
            model = Net().to(device)
            running = 0.0
            for x, y in loader:
                loss = criterion(model(x.to(device)), y.to(device))
                loss.backward()
                running += loss.detach() * x.size(0)  # weighted by batch size
            running = float(running)
            print(running / len(dataset))
            """
        ),
    ),
    "accumulate-a-count-stays-an-int": (
        "GPU201",
        code(
            """
            import torch
            def accuracy(model, loader):
                correct = 0
                for x, y in loader:
                    correct += (model(x.cuda()).argmax(1) == y.cuda()).sum().item()
                return correct
            """
        ),
        code(
            """
            import torch
            def accuracy(model, loader):
                correct = 0
                for x, y in loader:
                    correct += (model(x.cuda()).argmax(1) == y.cuda()).sum().detach()
                correct = torch.as_tensor(correct).item()
                return correct
            """
        ),
    ),
    "accumulate-inside-no-grad-with-a-shared-initial-value": (
        "GPU201",
        code(
            """
            import torch
            def test(model, device, test_loader):
                test_loss = seen = 0
                with torch.no_grad():
                    for data, target in test_loader:
                        output = model(data.to(device))
                        test_loss += torch.nn.functional.nll_loss(output, target.to(device)).item()
                        seen += len(data)
                return test_loss / seen
            """
        ),
        code(
            """
            import torch
            def test(model, device, test_loader):
                test_loss = seen = 0
                with torch.no_grad():
                    for data, target in test_loader:
                        output = model(data.to(device))
                        test_loss += torch.nn.functional.nll_loss(output, target.to(device)).detach()
                        seen += len(data)
                    test_loss = torch.as_tensor(test_loss).item()
                return test_loss / seen
            """
        ),
    ),
    "accumulate-through-cpu-copy": (
        "GPU201",
        code(
            """
            import torch
            model = Net().to("cuda")
            loss_accum = 0.0
            for x in loader:
                loss = model(x.to("cuda")).mean()
                loss_accum += loss.detach().cpu().item()
            """
        ),
        code(
            """
            import torch
            model = Net().to("cuda")
            loss_accum = 0.0
            for x in loader:
                loss = model(x.to("cuda")).mean()
                loss_accum += loss.detach()
            loss_accum = float(loss_accum)
            """
        ),
    ),
    "warm-up-before-cuda-event-timing": (
        "GPU402",
        code(
            """
            import torch
            net = torch.nn.Linear(64, 64).cuda()
            x = torch.rand(2**20, 64, device="cuda")
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            y = net(x)
            end.record()
            torch.cuda.synchronize()
            print(f"linear forward = {start.elapsed_time(end):.3f} ms")
            """
        ),
        code(
            """
            import torch
            net = torch.nn.Linear(64, 64).cuda()
            x = torch.rand(2**20, 64, device="cuda")
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            net(x)  # warm-up
            torch.cuda.synchronize()
            start.record()
            y = net(x)
            end.record()
            torch.cuda.synchronize()
            print(f"linear forward = {start.elapsed_time(end):.3f} ms")
            """
        ),
    ),
    "warm-up-before-the-sync": (
        "GPU402",
        code(
            """
            import time
            import torch
            x = torch.randn(8192, 8192, device="cuda")
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            y = torch.fft.fft2(x)
            torch.cuda.synchronize()
            print("fft2 took", time.perf_counter() - t0)
            """
        ),
        code(
            """
            import time
            import torch
            x = torch.randn(8192, 8192, device="cuda")
            torch.fft.fft2(x)  # warm-up
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            y = torch.fft.fft2(x)
            torch.cuda.synchronize()
            print("fft2 took", time.perf_counter() - t0)
            """
        ),
    ),
    "warm-up-adds-the-sync": (
        "GPU402",
        code(
            """
            import time
            import cupy as cp
            def bench(n):
                a = cp.random.rand(n, n)
                # one product
                start = time.perf_counter()
                c = a @ a
                cp.cuda.Device().synchronize()
                return time.perf_counter() - start
            """
        ),
        code(
            """
            import time
            import cupy as cp
            def bench(n):
                a = cp.random.rand(n, n)
                # one product
                a @ a  # warm-up
                cp.cuda.Device().synchronize()
                start = time.perf_counter()
                c = a @ a
                cp.cuda.Device().synchronize()
                return time.perf_counter() - start
            """
        ),
    ),
    "random-draw-on-the-device": (
        "GPU102",
        code(
            """
            import torch
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            for step in range(num_steps):
                explore = torch.rand((num_envs,)).to(device) < epsilon
            """
        ),
        code(
            """
            import torch
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            for step in range(num_steps):
                explore = torch.rand((num_envs,), device=device) < epsilon
            """
        ),
    ),
    "processes-for-compute": (
        "GPU501",
        code(
            """
            from concurrent.futures import ThreadPoolExecutor

            def count_collatz_steps(limit):
                longest = 0
                for start in range(1, limit):
                    n, steps = start, 0
                    while n != 1:
                        n = n // 2 if n % 2 == 0 else 3 * n + 1
                        steps += 1
                    longest = max(longest, steps)
                return longest

            if __name__ == "__main__":
                with ThreadPoolExecutor(max_workers=8) as pool:  # one per core
                    results = list(pool.map(count_collatz_steps, [200_000] * 8))
            """
        ),
        code(
            """
            from concurrent.futures import ProcessPoolExecutor

            def count_collatz_steps(limit):
                longest = 0
                for start in range(1, limit):
                    n, steps = start, 0
                    while n != 1:
                        n = n // 2 if n % 2 == 0 else 3 * n + 1
                        steps += 1
                    longest = max(longest, steps)
                return longest

            if __name__ == "__main__":
                with ProcessPoolExecutor(max_workers=8) as pool:  # one per core
                    results = list(pool.map(count_collatz_steps, [200_000] * 8))
            """
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_unsafe_fix_parses_removes_the_finding_and_keeps_the_rest(name: str) -> None:
    rule, before, after = CASES[name]
    assert findings_of(before, rule), "the case must have a finding to fix"
    assert not fix_text(before, select=[rule]).changed  # behaviour changes: only with unsafe=True
    outcome = fix_text(before, unsafe=True, select=[rule])
    compile(outcome.text, name, "exec")
    assert findings_of(outcome.text, rule) == []
    assert outcome.text == after  # every byte outside the fix is kept


def test_an_exact_fill_stays_a_safe_fix_and_draws_and_rounded_fills_do_not() -> None:
    fill = "import torch\nfor step in range(100):\n    buffer = torch.zeros(64, 3).cuda()\n"
    assert fix_text(fill).text == fill.replace("torch.zeros(64, 3).cuda()", 'torch.zeros(64, 3, device="cuda")')
    for unsafe in ("torch.randn(64, 3)", "torch.linspace(0, 1, 64)", "torch.arange(0, 1, 0.1)"):
        outcome = fix_text(fill.replace("torch.zeros(64, 3)", unsafe))
        assert not outcome.changed and "GPU102" in [f.rule for f in outcome.unsafe_available], unsafe


def test_a_fill_behind_dtype_casts_is_made_on_the_device_and_cast_there() -> None:
    before = code(
        """
        import torch
        class VirtualNode(torch.nn.Module):
            def forward(self, x, edge_index, batch):
                ids = torch.zeros(batch[-1].item() + 1).to(edge_index.dtype).to(edge_index.device)
                mask = torch.ones(len(x)).bool().cuda()
                return ids, mask
        """
    )
    outcome = fix_text(before)  # safe: zeros and ones are the same bits anywhere, casts do not move
    assert outcome.text == before.replace(
        "torch.zeros(batch[-1].item() + 1).to(edge_index.dtype).to(edge_index.device)",
        "torch.zeros(batch[-1].item() + 1, device=edge_index.device).to(edge_index.dtype)",
    ).replace("torch.ones(len(x)).bool().cuda()", 'torch.ones(len(x), device="cuda").bool()')
    assert findings_of(outcome.text, "GPU102") == []


#: name -> (rule, code with a finding the fix must leave alone)
DECLINED = {
    "accumulator-read-inside-the-loop": (
        "GPU201",
        """
        import torch
        model = Net().cuda()
        running = 0.0
        for x in loader:
            loss = model(x.cuda()).mean()
            running += loss.item()
            print(f"so far {running:.3f}")
        """,
    ),
    "accumulator-not-a-number-literal": (
        "GPU201",
        """
        import torch
        model = Net().cuda()
        running = start_value
        for x in loader:
            running += model(x.cuda()).mean().item()
        """,
    ),
    "float-added-to-an-int": (  # `float(total)` would turn an empty loop's 0 into 0.0
        "GPU201",
        """
        import torch
        model = Net().cuda()
        running = 0
        for x in loader:
            running += float(model(x.cuda()).mean())
        """,
    ),
    "loop-timed-by-the-sync": (  # without the per-step sync the clock reads measure launches
        "GPU201",
        """
        import time
        import torch
        model = Net().cuda()
        running = 0.0
        last = time.time()
        for x in loader:
            running += model(x.cuda()).mean().item()
            now = time.time()
            print(now - last)
            last = now
        """,
    ),
    "synced-value-inside-a-call": (  # `max(tensor, 0)` would sync again
        "GPU201",
        """
        import torch
        model = Net().cuda()
        running = 0.0
        for x in loader:
            running += max(model(x.cuda()).mean().item(), 0.0)
        """,
    ),
    "accumulator-read-by-a-function": (
        "GPU201",
        """
        import torch
        model = Net().cuda()
        running = 0.0
        def report():
            print(running)
        for x in loader:
            running += model(x.cuda()).mean().item()
            report()
        """,
    ),
    "copy-under-a-condition": (
        "GPU101",
        """
        import torch
        dev = torch.device("cuda")
        mask = torch.ones(512, 512)
        for x in loader:
            if use_mask:
                out = x.to(dev) * mask.to(dev)
        """,
    ),
    "copied-data-handed-to-unknown-code": (  # `refresh` may change `mask` in place
        "GPU101",
        """
        import torch
        dev = torch.device("cuda")
        mask = torch.ones(512, 512)
        for x in loader:
            refresh(mask)
            out = x.to(dev) * mask.to(dev)
        """,
    ),
    "copy-changed-in-place-in-the-loop": (  # each iteration needs a fresh copy
        "GPU101",
        """
        import torch
        X = torch.from_numpy(X_np)
        for epoch in range(100):
            X_gpu = X.cuda()
            X_gpu.mul_(epoch_scale)
            loss = model(X_gpu).mean()
        """,
    ),
    "copy-written-into": (
        "GPU101",
        """
        import torch
        X = torch.from_numpy(X_np)
        for epoch in range(100):
            X_gpu = X.cuda()
            X_gpu[0] = 0
            loss = model(X_gpu).mean()
        """,
    ),
    "copy-kept-per-iteration": (  # one shared tensor where the list held distinct ones
        "GPU101",
        """
        import torch
        X = torch.from_numpy(X_np)
        copies = []
        for epoch in range(100):
            X_gpu = X.cuda()
            copies.append(X_gpu)
        """,
    ),
    "copy-inside-a-device-context": (  # `.cuda()` copies to the device the block selects
        "GPU101",
        """
        import torch
        X = torch.from_numpy(X_np)
        for epoch in range(100):
            with torch.cuda.device(1):
                X_gpu = X.cuda()
        """,
    ),
    "copy-in-a-comprehension": (
        "GPU101",
        """
        import torch
        dev = torch.device("cuda")
        mask = torch.ones(512, 512)
        results = [img * mask.to(dev) for img in images]
        """,
    ),
    "timed-region-of-several-statements": (
        "GPU402",
        """
        import time
        import torch
        x = torch.randn(4096, 4096, device="cuda")
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        y = torch.fft.fft2(x)
        z = torch.fft.ifft2(y)
        torch.cuda.synchronize()
        print("round trip", time.perf_counter() - t0)
        """,
    ),
    "timed-loop": (
        "GPU402",
        """
        import time
        import torch
        x = torch.randn(4096, 4096, device="cuda")
        t0 = time.perf_counter()
        for _ in range(10):
            y = torch.fft.fft2(x)
        torch.cuda.synchronize()
        print("fft2", time.perf_counter() - t0)
        """,
    ),
    "random-draw-with-a-cpu-generator": (
        "GPU102",
        """
        import torch
        g = torch.Generator()
        for step in range(100):
            noise = torch.randn(64, 3, generator=g).to("cuda")
        """,
    ),
    "fill-moved-through-another-tensor": (  # `.to(other)` may move it as well as cast it
        "GPU102",
        """
        import torch
        def pad(other, n):
            return torch.zeros(n).to(other).to(other.device)
        """,
    ),
    "leaf-that-requires-grad": (
        "GPU102",
        """
        import torch
        for step in range(100):
            w = torch.zeros(64, requires_grad=True).cuda()
        """,
    ),
    "thread-pool-at-import-time": (  # a spawned child would run the pool again on import
        "GPU501",
        """
        from concurrent.futures import ThreadPoolExecutor

        def count_primes(n):
            return sum(1 for k in range(2, n) if all(k % d for d in range(2, int(k ** 0.5) + 1)))

        with ThreadPoolExecutor(max_workers=4) as pool:
            counts = list(pool.map(count_primes, [10_000] * 4))
        """,
    ),
    "work-that-writes-into-its-argument": (  # a child's writes never reach the parent
        "GPU501",
        """
        from concurrent.futures import ThreadPoolExecutor

        def monte_carlo(n, out, slot):
            hits = 0
            for i in range(n):
                x = (i * 7919 % 1000) / 1000
                hits += x * x < 0.5
            out[slot] = hits
            return hits

        def run(out):
            with ThreadPoolExecutor() as pool:
                for k in range(4):
                    pool.submit(monte_carlo, 10**6, out, k)
        """,
    ),
    "pool-with-thread-arguments": (
        "GPU501",
        """
        from concurrent.futures import ThreadPoolExecutor

        def square_sum(n):
            total = 0
            for i in range(n):
                total += i * i
            return total

        def run():
            with ThreadPoolExecutor(4, thread_name_prefix="sq") as pool:
                return list(pool.map(square_sum, [10**6] * 4))
        """,
    ),
}


@pytest.mark.parametrize("name", sorted(DECLINED))
def test_no_fix_where_the_rewrite_is_not_well_defined(name: str) -> None:
    rule, before = DECLINED[name]
    before = code(before)
    assert findings_of(before, rule), "the case must have a finding"
    outcome = fix_text(before, unsafe=True, select=[rule])
    assert not outcome.changed and outcome.text == before
    context = FixContext.of(before, "f.py")  # the fixer declines; it does not fail
    assert [FIXERS[rule](finding, context) for finding in check_source(before, "f.py", select=rule)] == [None] * len(findings_of(before, rule))


def _documented_and_invalid_cases() -> list[tuple[str, str, str]]:
    cases = []
    for rule in ALL_RULES:
        if rule.code not in FIXERS:
            continue
        document = (REPO / "rules" / f"{rule.code}.md").read_text(encoding="utf-8")
        example = re.search(r"## Example\n```python\n(.*?)```", document, re.DOTALL)
        assert example is not None
        cases.append((rule.code, "document", example.group(1)))
        cases += [(rule.code, f"INVALID[{i}]", textwrap.dedent(case.code)) for i, case in enumerate(rule.INVALID)]
    return cases


@pytest.mark.parametrize(("rule", "where", "before"), _documented_and_invalid_cases(), ids=lambda v: v if len(v) < 20 else "")
def test_fixes_of_the_documented_cases_parse_and_change_only_the_lines_they_fix(rule: str, where: str, before: str) -> None:
    found = check_source(before, "f.py", select=rule)
    outcome = fix_text(before, unsafe=True, select=[rule])
    compile(outcome.text, where, "exec")
    remaining = check_source(outcome.text, "f.py", select=rule)
    # Each fixed finding is gone; a fix may leave one cheaper read behind (`total = float(total)`
    # once per step after a per-parameter `.item()` loop), never more findings than before.
    assert not {f.message for f in outcome.fixed} & {f.message for f in remaining}
    assert len(remaining) <= len(found)
    finding_lines = {line for f in found for line in range(f.line, f.end_line + 1)}
    lines = before.splitlines()
    removed = set(Counter(lines) - Counter(outcome.text.splitlines()))  # moved lines are kept
    # A pool's fix renames it where it is made and imported, away from the finding's line.
    allowed = {lines[n - 1] for n in finding_lines} | {line for line in lines if "ThreadPoolExecutor" in line}
    assert removed <= allowed
