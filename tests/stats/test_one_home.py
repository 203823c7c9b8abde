"""No Wilson interval, kappa, percentile or rank correlation is defined outside freshwiki.stats.

Five copies of these once drifted apart (two kappas disagreed on the degenerate case, two
percentiles picked different ranks). The check reads the source of the package and of the
experiment scripts: a function or class whose name says it computes one of these, or the
tell-tale formula of one, anywhere but ``src/freshwiki/stats/``, fails.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATS = ROOT / "src" / "freshwiki" / "stats"

NAME = re.compile(r"wilson|kappa|percentile|quantile|kendall|spearman|bootstrap", re.I)
"""A definition whose name matches computes one of the statistics."""
FORMULAS = {
    "Wilson interval": re.compile(r"z\s*\*\s*z\s*/\s*\(\s*4|z\s*\*\*\s*2\s*/\s*\(\s*4"),
    "kappa": re.compile(r"/\s*\(\s*1(\.0)?\s*-\s*(p_e|pe|chance|expected)\s*\)"),
    "quantile of draws": re.compile(r"\b(np|numpy)\.(quantile|percentile|nanquantile|"
                                    r"nanpercentile)\s*\("),
}


def definitions(source: str) -> list[str]:
    """Where ``source`` defines a statistic that belongs in freshwiki.stats."""
    found = [f"line {node.lineno}: defines {node.name}"
             for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
             and NAME.search(node.name)]
    for line_no, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0]
        found += [f"line {line_no}: {what} formula" for what, pattern in FORMULAS.items()
                  if pattern.search(code)]
    return found


def sources() -> list[Path]:
    package = [p for p in (ROOT / "src" / "freshwiki").rglob("*.py")
               if not p.is_relative_to(STATS)]
    return sorted([*package, *(ROOT / "experiments").glob("*.py")])


def test_no_statistic_is_defined_outside_the_stats_module() -> None:
    paths = sources()
    assert len(paths) > 100  # the scan sees the package and the experiments
    bad = {str(p.relative_to(ROOT)): hits for p in paths
           if (hits := definitions(p.read_text(encoding="utf-8")))}
    assert not bad, f"statistics defined outside freshwiki.stats: {bad}"


def test_the_stats_module_itself_is_what_the_check_would_catch() -> None:
    # The real definitions trip the check, so it would see a copy of them elsewhere.
    text = "\n".join(p.read_text(encoding="utf-8") for p in STATS.glob("_*.py"))
    hits = definitions(text)
    assert any("defines wilson_ci" in h for h in hits)
    assert any("defines kappa_from_matrix" in h for h in hits)
    assert any("defines percentile" in h for h in hits)
    assert any("quantile of draws formula" in h for h in hits)


def test_planted_copies_are_found() -> None:
    planted = (
        "import numpy as np\n"
        "def share(k, n):\n"
        "    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5)\n"
        "def agree(p_o, p_e):\n"
        "    return (p_o - p_e) / (1 - p_e)\n"
        "def p99(xs):\n"
        "    return float(np.percentile(xs, 99))\n"
        "class CohenKappa:\n"
        "    pass\n"
        "async def nearest_percentile(xs, q):\n"
        "    return sorted(xs)[0]\n"
    )
    assert definitions(planted) == [
        "line 8: defines CohenKappa", "line 10: defines nearest_percentile",
        "line 3: Wilson interval formula", "line 5: kappa formula",
        "line 7: quantile of draws formula"]
    # the same statistics merely used, or named in a comment, are fine
    assert definitions("from freshwiki.stats import wilson_ci\n"
                       "ci = wilson_ci(3, 4)  # a Wilson interval, z * z / (4 n²)\n") == []
