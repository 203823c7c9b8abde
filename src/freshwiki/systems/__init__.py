"""Systems under test: each turns a question (later: a benchmark sample) into an answer."""
