"""Private-use sentinels that carry tag positions and line breaks through the text.

A maintenance tag leaves a sentinel where it stood; assembly turns it into an offset in the
final text, so tags stay anchored however much markup is removed around them.
"""

from __future__ import annotations

import re
from typing import Final

_SENT_OPEN: Final = "\ue000"


_SENT_CLOSE: Final = "\ue001"


_DIGIT0: Final = 0xE010


_SENT_RE: Final = re.compile("\ue000[\ue010-\ue019]+\ue001")


_SENT: Final = "(?:\ue000[\ue010-\ue019]+\ue001)"


_BR: Final = "\u2028"
"""``<br>``: a newline in text paragraphs, a space in headings, list items and cells."""


_GAP: Final = "\ue002"
"""Left where markup was dropped before parsing, so text around it does not merge (two
italic quotes either side of a dropped template are not four quotes), as around the node the
parser would have built; removed when the text is tidied."""


_PRIVATE_RE: Final = re.compile("[\ue000-\ue01f]")


def _sentinel(index: int) -> str:
    return _SENT_OPEN + "".join(chr(_DIGIT0 + int(d)) for d in str(index)) + _SENT_CLOSE


def _sentinel_index(token: str) -> int:
    return int("".join(str(ord(c) - _DIGIT0) for c in token[1:-1]))
