"""Benchmark options sample=N / seed=S: a reproducible subset of questions from across the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from freshwiki.benchmarks import load_benchmark
from freshwiki.benchmarks.wikicontradict import (
    DatasetError,
    Selection,
    WikiContradict,
    builtin_revisions,
)
from freshwiki.config import Settings

# The nine ids with the lowest sha256("1:<id>") among the 253, worked out with coreutils
# (printf '1:%s' ID | sha256sum, sorted, first nine), not with the code under test.
SEED_1_NINE = ["wc-055-q1", "wc-071-q2", "wc-091-q3", "wc-101-q3", "wc-102-q1", "wc-108-q2",
               "wc-118-q7", "wc-124-q6", "wc-128-q1"]


def _bench(settings: Settings, path: Path, **options: object) -> WikiContradict:
    bench = load_benchmark("wikicontradict", settings, {"path": str(path), **options})
    assert isinstance(bench, WikiContradict)
    return bench


def test_sample_and_seed_pick_the_same_questions_from_across_the_file(
    settings: Settings, wikicontradict_path: Path
) -> None:
    # values as the CLI passes them: JSON-typed ints, or strings
    bench = _bench(settings, wikicontradict_path, sample=9, seed=1)
    assert [s.id for s in bench.samples()] == SEED_1_NINE
    assert [s.id for s in _bench(settings, wikicontradict_path, sample="9", seed="1").samples()
            ] == SEED_1_NINE
    assert bench.describe()["samples"] == 9
    assert bench.describe()["selection"] == {"sample": 9, "seed": 1}
    # a wider selection with the same seed keeps the narrower one; another seed differs
    wider = [s.id for s in _bench(settings, wikicontradict_path, sample=20, seed=1).samples()]
    assert len(wider) == 20 and set(SEED_1_NINE) <= set(wider) and wider == sorted(wider)
    other = [s.id for s in _bench(settings, wikicontradict_path, sample=9, seed=2).samples()]
    assert other != SEED_1_NINE


def test_no_selection_leaves_the_whole_file_and_its_configuration(
    settings: Settings, wikicontradict_path: Path
) -> None:
    bench = _bench(settings, wikicontradict_path)
    assert len(list(bench.samples())) == 253
    assert "selection" not in bench.describe()  # old runs keep their ids


def test_revised_templates_apply_to_the_selected_revised_questions_only(
    settings: Settings, wikicontradict_path: Path
) -> None:
    # the shipped revisions name questions outside any small selection; they must not fail
    bench = _bench(settings, wikicontradict_path, sample=9, seed=2)
    chosen = list(bench.samples())
    revised_ids = {qid for item in builtin_revisions().items.values() for qid in item.keep}
    expected = {s.id for s in chosen} & revised_ids
    assert expected  # seed 2 picks some revised questions (wc-012-q1 is one)
    assert {s.id for s in chosen if bench.applies(s, "5.3")} == expected
    assert bench.describe()["revisions"]["questions"] == len(expected)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sample": 0}, r"sample=0 is outside 1\.\.253"),
        ({"sample": 254}, r"sample=254 is outside 1\.\.253"),
        ({"sample": "many"}, r"sample='many' is not a whole number"),
        ({"sample": 3, "seed": 1.5}, r"seed=1\.5 is not a whole number"),
        ({"seed": 3}, r"seed= chooses questions only together with sample=N"),
    ],
)
def test_bad_selection_options_name_the_option_and_the_fix(
    settings: Settings, wikicontradict_path: Path, options: dict[str, object], message: str
) -> None:
    with pytest.raises(DatasetError, match=message) as caught:
        _bench(settings, wikicontradict_path, **options)
    assert caught.value.hint


def test_selection_direct_construction(wikicontradict_path: Path) -> None:
    bench = WikiContradict.from_file(wikicontradict_path, selection=Selection(9, 1))
    assert [s.id for s in bench.samples()] == SEED_1_NINE
