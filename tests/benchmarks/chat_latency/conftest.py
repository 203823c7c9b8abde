"""The chat evaluation fixtures, shared with chat_accuracy's tests."""

from tests.benchmarks.chat_accuracy.conftest import chat_eval

__all__ = ["chat_eval"]
