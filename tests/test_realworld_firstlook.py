"""The first-look bookkeeping of benchmarks/realworld/realworld.py: verdicts spread over several
label files, expert recall lists, and the precision / recall arithmetic (tiny fake data, no network)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "realworld" / "realworld.py"


@pytest.fixture(scope="module")
def realworld() -> ModuleType:
    spec = importlib.util.spec_from_file_location("realworld_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def label(repo: str, path: str, line: int, rule: str, verdict: str) -> str:
    return (
        f'[[label]]\nrepo = "{repo}"\npath = "{path}"\nline = {line}\nrule = "{rule}"\n'
        f'verdict = "{verdict}"\nreason = "r"\n\n'
    )


def write_fixture(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "labels").mkdir()
    (tmp_path / "recall").mkdir()
    main = tmp_path / "labels.toml"
    main.write_text(label("a/old", "x.py", 1, "GPU201", "true"))
    (tmp_path / "labels" / "o+rl.toml").write_text(
        label("o/rl", "train.py", 10, "GPU201", "true")
        + label("o/rl", "train.py", 20, "GPU702", "false")
        + label("o/rl", "train.py", 30, "GPU102", "debatable")
        + label("o/rl", "sac.py", 5, "GPU201", "true")
    )
    (tmp_path / "recall" / "o+rl.toml").write_text(
        'repo = "o/rl"\ncommit = "' + "0" * 40 + '"\npicked_before_run = ["train.py", "sac.py"]\n\n'
        '[[instance]]\npath = "train.py"\nline = 9\nlines = [10]\nkind = "sync-in-loop"\nwhy = "w"\n\n'
        '[[instance]]\npath = "train.py"\nline = 20\nkind = "sync-in-loop"\nwhy = "only a false finding here"\n\n'
        '[[instance]]\npath = "ppo.py"\nline = 3\nkind = "small-kernel-loop"\nwhy = "nothing reported"\n'
    )
    return main, tmp_path


def test_labels_from_every_file_are_merged(realworld: ModuleType, tmp_path: Path) -> None:
    main, root = write_fixture(tmp_path)
    labels = realworld.load_labels(*realworld.label_files(main, root / "labels"))
    assert len(labels) == 5
    assert labels[realworld.Key("o/rl", "train.py", 20, "GPU702")].verdict == "false"


def test_a_finding_judged_in_two_files_is_refused(realworld: ModuleType, tmp_path: Path) -> None:
    main, root = write_fixture(tmp_path)
    (root / "labels" / "dup.toml").write_text(label("o/rl", "sac.py", 5, "GPU201", "false"))
    with pytest.raises(SystemExit, match="judged twice"):
        realworld.load_labels(*realworld.label_files(main, root / "labels"))


def test_recall_lists_keep_the_extra_lines(realworld: ModuleType, tmp_path: Path) -> None:
    _, root = write_fixture(tmp_path)
    recall = realworld.load_recall(root / "recall")
    assert [i.lines for i in recall["o/rl"]] == [(9, 10), (20,), (3,)]
    assert realworld.load_recall(root / "absent") == {}


def test_precision_counts_true_over_decided_and_recall_needs_a_finding_not_judged_false(
    realworld: ModuleType, tmp_path: Path
) -> None:
    main, root = write_fixture(tmp_path)
    labels = realworld.load_labels(*realworld.label_files(main, root / "labels"))
    key = realworld.Key
    found = [
        key("o/rl", "train.py", 10, "GPU201"),
        key("o/rl", "train.py", 20, "GPU702"),
        key("o/rl", "train.py", 30, "GPU102"),
        key("o/rl", "sac.py", 5, "GPU201"),
        key("o/rl", "sac.py", 7, "GPU101"),  # nobody judged it yet
    ]
    summary = realworld.summarize(found, labels, realworld.load_recall(root / "recall")["o/rl"])
    assert summary.findings == 5 and summary.judged == 4
    assert (summary.verdicts["true"], summary.verdicts["false"], summary.verdicts["debatable"]) == (2, 1, 1)
    assert summary.precision == pytest.approx(2 / 3)
    assert summary.per_rule["GPU702"]["false"] == 1
    assert (summary.caught, summary.listed) == (1, 3)  # line 10 counts for the instance at line 9
    assert [i.lines[0] for i in summary.missed] == [20, 3]

    report = realworld.summary_report("o/rl", summary)
    assert "T/F/D 2/1/1, precision 0.67, recall 1/3 (0.33)" in report
    assert "GPU702: 1 findings, T/F/D 0/1/0, precision 0.00" in report
    assert "missed o/rl:ppo.py:3 small-kernel-loop: nothing reported" in report


def test_nothing_reported_and_nothing_listed_prints_dashes(realworld: ModuleType) -> None:
    summary = realworld.summarize([], {}, [])
    assert summary.precision is None and summary.recall is None
    assert "precision -, recall 0/0 (-)" in realworld.summary_report("empty", summary)


def test_a_finding_catches_an_instance_on_any_line_of_its_range(realworld: ModuleType, tmp_path: Path) -> None:
    """`(x.full_tensor() if d else x)\n    .item()`: the expression opens on line 1, the reader
    listed the `.item()` on line 3; the finding's range covers both."""
    main, root = write_fixture(tmp_path)
    labels = realworld.load_labels(*realworld.label_files(main, root / "labels"))
    instances = realworld.load_recall(root / "recall")["o/rl"]
    opening = realworld.Key("o/rl", "ppo.py", 1, "GPU301")
    assert realworld.summarize([opening], labels, instances).caught == 0
    assert realworld.summarize([opening], labels, instances, {opening: 3}).caught == 1
