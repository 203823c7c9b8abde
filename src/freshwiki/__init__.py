"""freshwiki: LLMs and knowledge that is recent, changing or contradictory, on Wikipedia."""

__version__ = "0.1.0"
