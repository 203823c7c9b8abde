"""``python -m freshwiki.cli``: the same as the ``freshwiki`` executable."""

from freshwiki.cli._root import main

main()
