"""Registries by name (``freshwiki.plugins``): built-ins loaded lazily, plug-ins three ways."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from freshwiki.benchmarks import BUILTIN_BENCHMARKS, BUILTIN_SCORERS, benchmark_names, scorer_names
from freshwiki.errors import FreshwikiError
from freshwiki.plugins import PluginError, Registry, UnknownNameError, import_plugins
from freshwiki.systems import BUILTIN_SYSTEMS, system_names

EXE = Path(sys.executable).with_name("freshwiki")


def test_every_builtin_reference_loads_a_callable() -> None:
    # Each table row is a string: a typo would only show when a user asks for that name.
    for table, kind in ((BUILTIN_BENCHMARKS, "benchmark"), (BUILTIN_SCORERS, "scorer"),
                        (BUILTIN_SYSTEMS, "system")):
        registry: Registry[object] = Registry(kind, "freshwiki.none", table)  # type: ignore[type-var]
        for name in table:
            assert callable(registry.get(name)), name


def test_names_list_builtins_without_importing_them() -> None:
    code = ("import sys\nfrom freshwiki.benchmarks import benchmark_names, scorer_names\n"
            "from freshwiki.systems import system_names\n"
            "names = benchmark_names() + scorer_names() + system_names()\n"
            "loaded = [m for m in sys.modules if m.startswith(('freshwiki.benchmarks.',"
            " 'freshwiki.systems.')) and m.count('.') == 2 and not m.split('.')[2]"
            ".startswith('_')]\n"
            "print(len(names), loaded)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "FRESHWIKI_PLUGINS": ""}).stdout
    assert out.split(" ", 1) == [
        str(len(BUILTIN_BENCHMARKS) + len(BUILTIN_SCORERS) + len(BUILTIN_SYSTEMS)), "[]\n"]


def test_the_builtin_names_are_the_ones_users_know() -> None:
    # (Other tests of this process may have registered more, e.g. the testkit's ``tiny``.)
    assert sorted(BUILTIN_BENCHMARKS) == [
        "chat_accuracy", "chat_latency", "claim_verification", "growover", "hellofresh-edits",
        "hellofresh-notes", "simulated-chat", "wikicontradict"]
    assert sorted(BUILTIN_SYSTEMS) == ["claim-verifier", "grounded", "rag", "ralm", "ralm-best",
                                       "replay", "rilm", "search-agent", "vanilla", "zero-shot"]
    assert sorted(BUILTIN_SCORERS) == [
        "chat-accuracy", "chat-accuracy-rules", "chat-factuality", "chat-informational",
        "chat-natural", "chat-non-repetitive", "chat-relevant", "chat-temporally-correct",
        "claim-verdict", "growover-bleu", "growover-em", "growover-f1", "growover-hit",
        "hellofresh-correct", "wikicontradict-judge", "wikicontradict-match"]
    assert set(BUILTIN_BENCHMARKS) <= set(benchmark_names())
    assert set(BUILTIN_SYSTEMS) <= set(system_names())
    assert set(BUILTIN_SCORERS) <= set(scorer_names())


class Boom(UnknownNameError):
    pass


def test_registered_wins_then_builtin_then_unknown_lists_names(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FRESHWIKI_PLUGINS", raising=False)
    registry: Registry[object] = Registry(  # type: ignore[type-var]
        "gadget", "freshwiki.test-none", {"json": "json:dumps", "bad": "json:no_such_attr"},
        Boom)
    assert registry.get("json") is json.dumps
    registry.register("json")(repr)
    assert registry.get("json") is repr
    with pytest.raises(Boom, match="unknown gadget 'nope'") as exc:
        registry.get("nope")
    assert exc.value.hint == "choose one of: bad, json."
    with pytest.raises(PluginError, match=r"built-in gadget 'bad'.*json:no_such_attr"):
        registry.get("bad")


def test_plugins_env_names_modules_to_import(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fw_env_plugin.py").write_text(
        "from freshwiki.systems import register_system\n"
        "@register_system('env-made')\ndef make(llm, settings, options):\n    return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("FRESHWIKI_PLUGINS", " fw_env_plugin , ")
    assert import_plugins() == ["fw_env_plugin"]
    assert "env-made" in system_names()
    monkeypatch.setenv("FRESHWIKI_PLUGINS", "fw_no_such_module")
    with pytest.raises(FreshwikiError, match="fw_no_such_module") as exc:
        system_names()
    assert "PYTHONPATH" in (exc.value.hint or "")


PLUGIN = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "fw-letters"
        version = "0.1.0"

        [project.entry-points."freshwiki.benchmarks"]
        letters = "fw_letters:letters_benchmark"

        [project.entry-points."freshwiki.systems"]
        shout = "fw_letters:shout_system"

        [project.entry-points."freshwiki.scorers"]
        letters-exact = "fw_letters:exact_scorer"
        """,
    "fw_letters/__init__.py": '''
        """A third-party benchmark, system and scorer, found only through entry points."""
        from freshwiki.llm import Message
        from freshwiki.seams import Output, Sample, Score, Task

        WORDS = ("oak", "birch", "alder")

        class Letters:
            name = "letters"
            templates = ("count",)
            default_templates = ("count",)
            breakdowns = ()

            def samples(self):
                for word in WORDS:
                    yield Sample(id=word, input=f"How many letters has {word}?",
                                 targets=(str(len(word)),))

            def render(self, sample, template):
                return Task(sample, template, (Message.user(sample.input),), sample.input)

            def scorers(self, judge):
                return [ExactScorer()]

        class ExactScorer:
            name = "letters-exact"

            async def score(self, task, output):
                hit = output.text.strip() == task.sample.targets[0]
                return Score(1.0 if hit else 0.0)

        class Shout:
            name = "shout"

            def __init__(self, llm):
                self.llm = llm

            def describe(self):
                return {"shout": True}

            async def respond(self, task):
                result = await self.llm.chat(list(task.messages), max_tokens=8)
                return Output(result.text.upper(), usage=result.usage)

            async def aclose(self):
                return None

        def letters_benchmark(settings, options):
            return Letters()

        def shout_system(llm, settings, options):
            return Shout(llm)

        def exact_scorer(judge):
            return ExactScorer()
        ''',
}


@pytest.mark.e2e
def test_an_installed_package_adds_a_benchmark_a_system_and_a_scorer(
        tmp_path: Path, _isolated_home: Path) -> None:
    source = tmp_path / "fw-letters"
    for name, text in PLUGIN.items():
        path = source / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-index", "--no-build-isolation", "--target", str(site), str(source)],
                   check=True, capture_output=True, text=True, timeout=300)
    assert (site / "fw_letters-0.1.0.dist-info" / "entry_points.txt").is_file()

    model = tmp_path / "model.jsonl"  # the scripted model answers 3, 5, 4 in sample order
    model.write_text("".join(json.dumps({"text": t}) + "\n" for t in ("3", "5", "4")))
    env = {**os.environ, "PYTHONPATH": str(site), "FRESHWIKI_PLUGINS": ""}
    proc = subprocess.run(
        [str(EXE), "eval", "letters", "--system", "shout", "--model", f"scripted:{model}",
         "--judge", "none", "--scorer", "letters-exact", "--concurrency", "1", "--json"],
        capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    # oak has 3 letters, birch 5, alder 5: the answers 3, 5, 4 are right twice.
    [mean] = summary["means"]
    assert (mean["scorer"], mean["n"]) == ("letters-exact", 3)
    assert abs(mean["mean"] - 2 / 3) < 1e-9
    assert summary["config"]["system"] == "shout"

    unknown = subprocess.run([str(EXE), "eval", "no-such", "--judge", "none"],
                             capture_output=True, text=True, timeout=300, env=env)
    assert unknown.returncode == 2
    assert "letters" in unknown.stderr and "wikicontradict" in unknown.stderr
