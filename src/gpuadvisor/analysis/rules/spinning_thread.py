"""GPU503: a helper thread that polls in a loop without ever waiting, taking the GIL from the
thread that drives the GPU."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.module_facts import FunctionFacts, ModuleFacts
from gpuadvisor.analysis.facts.traverse import own_nodes
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.prescan import THREAD_WORDS
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.threading_for_compute import is_pure_python_compute, only_calls, pure_call, work_function


def _never_waits(callee: str) -> bool:
    """Pure-Python calls, container methods (not `get`, which a queue blocks in) and instant
    probes (`kb.NONBLOCKING_PROBES`)."""
    return callee in kb.NONBLOCKING_PROBES or (pure_call(callee) and callee != "method.get")


def spins(function: FunctionFacts, facts: ModuleFacts) -> bool:
    """A `while` loop that never sleeps, waits, or reads a queue, a socket or a file: the thread
    runs bytecode for as long as it lives."""
    node = function.node
    if not isinstance(node, cst.FunctionDef) or function.compiled:
        return False
    return any(isinstance(inner, cst.While) for inner in own_nodes(node.body)) and only_calls(function, facts, _never_waits)


class SpinningThread(Rule):
    code = "GPU503"
    category = "threading-for-compute"
    severity = Severity.WARNING
    summary = "Helper thread polling in a loop that never sleeps or waits: it takes the GIL from the training loop"
    prefilter = (THREAD_WORDS,)

    VALID = [
        # A memory monitor that sleeps between samples, and a consumer blocked on its queue: each
        # gives the GIL back while it waits.
        Valid(
            """
            import threading
            import time
            import psutil

            class PeakMonitor:
                def __enter__(self):
                    self.process, self.running, self.peak = psutil.Process(), True, 0
                    threading.Thread(target=self.watch, daemon=True).start()
                    return self
                def watch(self):
                    while self.running:
                        self.peak = max(self.peak, self.process.memory_info().rss)
                        time.sleep(0.001)
            """
        ),
        Valid(
            """
            import threading

            def drain(queue, out):
                while True:
                    item = queue.get()
                    if item is None:
                        break
                    out.append(item)

            threading.Thread(target=drain, args=(jobs, results)).start()
            """
        ),
        # Pure-Python arithmetic in threads is GPU501's finding, not this one.
        Valid(
            """
            import threading

            def collatz(n):
                steps = 0
                while n != 1:
                    n = n // 2 if n % 2 == 0 else 3 * n + 1
                    steps += 1
                return steps

            threads = [threading.Thread(target=collatz, args=(27 + k,)) for k in range(4)]
            """
        ),
    ]
    INVALID = [
        # The peak-memory monitor of Hugging Face's examples polls without a pause for a whole epoch.
        Invalid(
            """
            import threading
            import psutil
            import torch

            class TorchTracemalloc:
                def __enter__(self):
                    self.process = psutil.Process()
                    self.peak_monitoring = True
                    monitor = threading.Thread(target=self.peak_monitor_func)
                    monitor.daemon = True
                    monitor.start()
                    return self
                def cpu_mem_used(self):
                    return self.process.memory_info().rss
                def peak_monitor_func(self):
                    self.cpu_peak = -1
                    while True:
                        self.cpu_peak = max(self.cpu_mem_used(), self.cpu_peak)
                        if not self.peak_monitoring:
                            break
                def __exit__(self, *exc):
                    self.peak_monitoring = False
            """,
            line=9,
            message="a loop that never sleeps or waits: the thread spins for as long as it lives",
        ),
        Invalid(
            """
            import threading
            import torch

            stop = threading.Event()

            def watch_memory(peaks):
                while not stop.is_set():
                    peaks.append(torch.cuda.memory_allocated())

            threading.Thread(target=watch_memory, args=(peaks,), daemon=True).start()
            """,
            line=10,
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        for launch in facts.thread_launches:
            function = work_function(launch, facts)
            if function is None or is_pure_python_compute(function, facts) or not spins(function, facts):
                continue  # arithmetic in threads is GPU501's
            name = "the lambda" if function.name == "<lambda>" else f"`{function.name}`"
            yield Report(
                launch.node,
                f"{launch.how} runs {name}, a loop that never sleeps or waits: the thread spins for as long as it "
                "lives and takes the GIL from the thread that launches the GPU work at every switch interval "
                "(5 ms by default), delaying its launches",
                "Wait in the loop (`time.sleep(0.001)`, or `stop.wait(0.001)` on a `threading.Event`), or read a "
                "peak after the work instead of polling (`resource.getrusage(resource.RUSAGE_SELF).ru_maxrss`, "
                "`torch.cuda.max_memory_allocated()`).",
            )
