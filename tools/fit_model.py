"""Fit the speedup model on the shipped rows and write it into the package.

    python tools/fit_model.py          # rewrite src/gpuadvisor/prediction/fitted_model.json
    python tools/fit_model.py --check  # exit 1 if the shipped file is out of step (CI)

Run it after changing `training_data/` or the prediction code the fit depends on: the shipped
file records a digest of both, and a test fails while it is stale. Needs the training extra
(`pip install -e '.[train]'`).
"""

from __future__ import annotations

import json
import sys

from gpuadvisor.prediction.model import SHIPPED_MODEL, fit_shipped_model, shipped_key


def main(argv: list[str]) -> int:
    if "--check" in argv:
        try:
            recorded = json.loads(SHIPPED_MODEL.read_text(encoding="utf-8"))["key"]
        except (OSError, ValueError, KeyError, TypeError):
            recorded = None
        if recorded != shipped_key():
            print(f"stale: {SHIPPED_MODEL.name} (run python tools/fit_model.py)")
            return 1
        return 0
    model = fit_shipped_model()
    SHIPPED_MODEL.write_text(model.to_json() + "\n", encoding="utf-8")
    rows = ", ".join(f"{name} {side.rows}" for name, side in model.sides.items())
    print(f"wrote {SHIPPED_MODEL} ({rows} rows; key {model.key})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
