"""What a finished (or partly finished) run looks like to statistics and reports.

The types live in :mod:`freshwiki.results`, where the analyses of benchmarks and systems (a
layer below evaluation) read them too; they are named here for the evaluation modules.
"""

from freshwiki.results import FailedItem as FailedItem
from freshwiki.results import RunInfo as RunInfo
from freshwiki.results import RunResults as RunResults
from freshwiki.results import ScoredItem as ScoredItem
from freshwiki.results import StoredOutput as StoredOutput
