"""GPU501: threads used to parallelise pure-Python arithmetic, which the GIL serialises."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.module_facts import FunctionFacts, ModuleFacts, ThreadLaunch
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.prescan import THREAD_WORDS
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid



def pure_call(callee: str) -> bool:
    """A builtin, `math`-style module or container method: it stays inside the interpreter."""
    if callee in kb.PURE_PYTHON_CALLS or callee.split(".")[0] in kb.PURE_PYTHON_CALLS:
        return True
    return callee.startswith("method.") and callee.removeprefix("method.") in kb.PURE_CONTAINER_METHODS


def only_calls(function: FunctionFacts, facts: ModuleFacts, accepts: Callable[[str], bool], seen: set[str] | None = None) -> bool:
    """Every call the function makes is one `accepts` allows, or a call of a function of this
    file that makes only such calls; a call of something unknown never is."""
    seen = set() if seen is None else seen
    if function.name in seen:
        return True
    seen.add(function.name)
    for callee in function.callees:
        if callee is None:
            return False
        if callee.startswith("local."):
            called = facts.functions.get(callee.removeprefix("local."))
            if called is None or not only_calls(called, facts, accepts, seen):
                return False
        elif not accepts(callee):
            return False
    return True


def is_pure_python_compute(function: FunctionFacts, facts: ModuleFacts) -> bool:
    """Loops (or recursion) doing arithmetic, calling nothing that could release the GIL."""
    if function.compiled or not function.has_arithmetic:
        return False
    if not (function.has_loop or function.is_recursive):
        return False
    return only_calls(function, facts, pure_call)


def work_function(launch: ThreadLaunch, facts: ModuleFacts) -> FunctionFacts | None:
    if launch.work_function is not None:
        return facts.functions.get(launch.work_function)
    work = launch.work
    return facts.lambdas.get(work) if work is not None else None  # type: ignore[call-overload]


class ThreadingForCompute(Rule):
    code = "GPU501"
    category = "threading-for-compute"
    severity = Severity.WARNING
    summary = "Threads running pure-Python arithmetic: the GIL runs them one at a time"
    prefilter = (THREAD_WORDS,)

    VALID = [
        Valid(
            """
            from concurrent.futures import ThreadPoolExecutor
            from urllib.request import urlopen

            def fetch(url):
                with urlopen(url) as response:
                    return response.read()

            with ThreadPoolExecutor(max_workers=8) as pool:
                pages = list(pool.map(fetch, urls))
            """
        ),
        Valid(
            """
            from concurrent.futures import ThreadPoolExecutor
            import numpy as np

            def block_product(a, b):
                total = 0
                for _ in range(4):
                    total = total + np.dot(a, b)
                return total

            with ThreadPoolExecutor() as pool:
                futures = [pool.submit(block_product, a, b) for a, b in blocks]
            """
        ),
        Valid(
            """
            from concurrent.futures import ProcessPoolExecutor

            def count_primes(n):
                return sum(1 for k in range(2, n) if all(k % d for d in range(2, int(k ** 0.5) + 1)))

            with ProcessPoolExecutor() as pool:
                counts = list(pool.map(count_primes, [10_000] * 4))
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import threading

            def monte_carlo(n, out, slot):
                hits = 0
                for i in range(n):
                    x = (i * 7919 % 1000) / 1000
                    hits += x * x < 0.5
                out[slot] = hits

            threads = [threading.Thread(target=monte_carlo, args=(10**6, res, k)) for k in range(4)]
            """,
            line=10,
        ),
        Invalid(
            """
            from concurrent.futures import ThreadPoolExecutor

            def count_primes(n):
                return sum(1 for k in range(2, n) if all(k % d for d in range(2, int(k ** 0.5) + 1)))

            with ThreadPoolExecutor(max_workers=4) as pool:
                counts = list(pool.map(count_primes, [10_000] * 4))
            """,
            line=7,
        ),
        Invalid(
            """
            import threading

            class Worker(threading.Thread):
                def run(self):
                    total = 0
                    for i in range(10**7):
                        total += i * i
                    self.total = total

            workers = [Worker() for _ in range(4)]
            """,
            line=10,
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        for launch in facts.thread_launches:
            function = work_function(launch, facts)
            if function is None or not is_pure_python_compute(function, facts):
                continue
            name = "the lambda" if function.name == "<lambda>" else f"`{function.name}`"
            yield Report(
                launch.node,
                f"{launch.how} runs {name}, pure-Python arithmetic: the GIL lets one thread execute "
                "Python code at a time, so these threads take turns instead of running in parallel",
                "Use processes (`concurrent.futures.ProcessPoolExecutor`, `multiprocessing.Pool`) or "
                "vectorise the loop with NumPy (which releases the GIL); keep threads for I/O.",
            )
