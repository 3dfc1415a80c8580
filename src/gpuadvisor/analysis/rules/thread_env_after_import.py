"""GPU502: BLAS/OpenMP thread-count variables set after the library read them."""

from __future__ import annotations

from collections.abc import Iterator

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.module_facts import ModuleFacts
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.prescan import THREAD_ENV_WORDS
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid


class ThreadEnvAfterImport(Rule):
    code = "GPU502"
    category = "thread-env-after-import"
    severity = Severity.WARNING
    summary = "OMP/MKL/OPENBLAS_NUM_THREADS set after numpy/torch/scipy was imported (no effect)"
    prefilter = (THREAD_ENV_WORDS,)

    VALID = [
        # Set before `mp.spawn`, imported as `from torch import multiprocessing as mp`: the
        # workers are fresh interpreters that read the variable when they import torch.
        Valid(
            """
            import os
            import torch
            from torch import multiprocessing as mp

            def launch(fn, world_size, args=()):
                if world_size > 1:
                    if "OMP_NUM_THREADS" not in os.environ:
                        os.environ["OMP_NUM_THREADS"] = "1"
                    mp.spawn(fn, nprocs=world_size, args=args)
            """
        ),
        # Putting the variable back as it was read sets nothing (the line that changes it is the
        # one to report, and here it comes before any import).
        Valid(
            """
            import os
            saved = os.environ.get("OMP_NUM_THREADS")
            os.environ["OMP_NUM_THREADS"] = "4"
            import numpy as np
            from sklearn.cluster import KMeans
            centers = KMeans(n_clusters=8).fit(np.random.rand(1000, 4)).cluster_centers_
            if saved is not None:
                os.environ["OMP_NUM_THREADS"] = saved
            """
        ),
        Valid(
            """
            import os
            os.environ["OMP_NUM_THREADS"] = "4"
            os.environ.setdefault("MKL_NUM_THREADS", "4")
            import numpy as np
            """
        ),
        Valid(
            """
            import numpy as np
            import os
            os.environ["CUDA_VISIBLE_DEVICES"] = "0"
            """
        ),
        Valid(
            """
            import os
            import subprocess
            import numpy as np
            os.environ["OMP_NUM_THREADS"] = "4"
            subprocess.run(["python", "worker.py"], check=True)
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import os
            import numpy as np
            os.environ["OMP_NUM_THREADS"] = "1"
            """,
            line=3,
        ),
        Invalid(
            """
            import os
            import torch
            os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
            """,
            line=3,
        ),
        Invalid(
            """
            import os
            from sklearn.linear_model import Ridge
            os.environ.update({"MKL_NUM_THREADS": "8"})
            """,
            line=3,
        ),
        # `from torch import distributed` joins a process group; it starts no process, so the
        # setting still comes after torch sized its thread pool.
        Invalid(
            """
            import os
            import torch as th
            from torch import distributed

            def main(args):
                os.environ["OMP_NUM_THREADS"] = "1"
                if args.world_size > 1:
                    distributed.init_process_group(backend="nccl", rank=args.rank, world_size=args.world_size)
            """,
            line=6,
            message="`OMP_NUM_THREADS` is set after `torch` was imported",
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        # (`from torch import multiprocessing as mp` imports the launcher under an alias)
        launches = any(facts.imports.imports_module(launcher) for launcher in kb.PROCESS_LAUNCHERS)
        if launches or any(seen.module.startswith("torch.distributed") for seen in facts.imported):
            return  # a launcher sets the variables for the processes it starts: they do take effect
        for write in facts.env_writes:
            earlier = [
                seen.module
                for seen in facts.imported
                if seen.order < write.order and seen.module.split(".")[0] in kb.THREAD_POOL_IMPORTERS
            ]
            if not earlier:
                continue
            yield Report(
                write.node,
                f"`{write.variable}` is set after `{earlier[0]}` was imported: its thread pool was sized "
                "at import time, so this setting has no effect",
                "Set it before the first import of numpy/torch/scipy (top of the entry script, or in the "
                "shell), or limit threads at run time with `threadpoolctl.threadpool_limits()` / "
                "`torch.set_num_threads()`.",
            )
