"""Wikitext → clean paragraphs with their section path and maintenance tags.

The rest of freshwiki needs what a reader sees in an article, not its markup. It also needs
what editors flagged: ``{{Inconsistent}}``, ``{{Citation needed}}``, ``{{Update}}``... These
tags are how Wikipedia marks contradictory or stale text, so they are kept as
:class:`~freshwiki.records.MaintenanceTag` records, anchored where they stood, not thrown away
with the other templates.

How a page is processed, and why:

1. **Sanitize, in linear time.** mwparserfromhell backtracks from every construct that is
   never closed: 240 KB of ``[[a|[[b]] c`` lines took 400 s to parse, and an unclosed
   ``{{``, ``{|``, ``<span>`` or ``<ref>`` is just as bad. A single pass matches ``{{ }}``,
   ``[[ ]]``, ``{| |}`` and paired HTML tags with stacks (as MediaWiki's preprocessor does)
   and removes the markup of openers that are never closed and of stray closers. The text
   stays. Comments go first (an unclosed ``<!--`` runs to the end of the page, as in
   MediaWiki). ``<ref>`` and other extension tags are taken out before parsing: refs and
   galleries are dropped, ``<nowiki>``/``<pre>`` become plain text, and ``<math>`` becomes
   :data:`MATH_PLACEHOLDER`.
2. **Chunk.** The text is cut at blank lines and heading lines that lie outside every
   template, link, table and tag, into chunks of about :data:`CHUNK_CHARS`. Each chunk is
   parsed on its own, so any left-over superlinear behaviour of the parser stays bounded
   by the chunk size. Cutting there changes nothing: paragraphs end at blank lines anyway.
3. **Parse and render.** mwparserfromhell parses each chunk (``skip_style_tags``: the
   quote markup is stripped from the text instead, which is faster and never backtracks).
   Its tokenizer is C but its node builder is Python, so nodes are built only for the
   top-level constructs that need them; text, list markers and plain headings and links are
   rendered from their tokens (:meth:`_Renderer.render_chunk`), with the same result.
   The nodes are rendered to a stream of text, headings, list markers and table blocks.
   Links become their text, and refs, files, categories, interlanguage links and
   templates go away. A small, data-driven set of inline templates is rendered instead
   (:data:`INLINE_TEMPLATES`). Maintenance tags leave a private-use sentinel in the text
   where they stood.
4. **Assemble.** The stream is cut into :class:`~freshwiki.records.Paragraph` records at
   blank lines, list boundaries, headings and tables. The whitespace and punctuation left
   behind by removed markup is tidied, and each tag sentinel becomes a ``sentence_offset``
   in the final text.

If the parser or the renderer fails on a chunk, including ``RecursionError``, or the chunk
nests deeper than :data:`DEPTH_LIMIT`, that chunk goes through a fallback instead: a
conservative regex strip (linear, any depth) that keeps the chunk's text, headings, lists,
maintenance tags and whitelisted templates, and drops other templates and every table.
``on_error="raise"`` turns this off (useful to find such pages); the module constant
:data:`FALLBACK_ON_ERROR` sets the default. The fallback is silent in the text, so
:func:`clean_wikitext_result` reports each chunk it took (:class:`Fallback`: the reason,
:data:`TOO_DEEP` or the exception's type name, and the chunk's size); ingest counts them.

Tag scope follows where the editor put the tag, not only which template it is. Editors put
``{{Inconsistent}}`` mid-sentence (all 68 uses in WikiContradict are inline), so:

* A tag that has text of its paragraph before it is ``inline``. Its ``sentence_offset``
  is where it stood in the final text, i.e. the end of the text it qualifies.
* A block-family tag (:data:`MAINTENANCE_TAGS`, scope ``block``) with nothing of its
  paragraph before it is ``block``, with ``sentence_offset=None``. It attaches to the next
  paragraph: the first paragraph of its section, or of the lead for a banner at the top.
  A line holding only block tags also ends the paragraph before it, since MediaWiki
  renders a banner there. A tag in a heading is a block tag of that section.
* A tag whose paragraph turns out empty (the template stood alone) becomes a block tag of
  the next paragraph. If its section (and subsections) has no paragraph left, the tags are
  emitted on a paragraph with empty text, so that no tag is ever lost.
* Tags inside content that is dropped (tables and infoboxes when not kept, refs, files,
  lists when ``keep_lists=False``, boilerplate sections) are not attached to anything.
  :func:`extract_tags` still reports them.

Where each stage lives (private modules; only the names re-exported here are public):
``_sanitize`` (stages 1 and 2), ``_render`` (stage 3, with the item types in ``_stream``),
``_fallback`` (the regex strip), ``_assemble`` (stage 4), ``_tags`` (which templates are
maintenance tags), ``_templates`` (the inline templates rendered), ``_sentinels`` (tag and line
break markers carried through the text), ``_shared`` (knobs and the error), ``clean`` (the
entry points).
"""

from freshwiki.corpus.wikitext._sanitize import (
    DEPTH_LIMIT,
)
from freshwiki.corpus.wikitext._shared import (
    BOILERPLATE_SECTIONS,
    CHUNK_CHARS,
    FALLBACK_ON_ERROR,
    MATH_PLACEHOLDER,
    WikitextError,
)
from freshwiki.corpus.wikitext._tags import (
    MAINTENANCE_TAGS,
    TagSpec,
    canonical_tag_name,
)
from freshwiki.corpus.wikitext._templates import (
    INLINE_TEMPLATES,
    TemplateArgs,
)
from freshwiki.corpus.wikitext.clean import (
    TOO_DEEP,
    CleanResult,
    Fallback,
    clean_wikitext,
    clean_wikitext_result,
    extract_tags,
)

__all__ = [
    "BOILERPLATE_SECTIONS",
    "CHUNK_CHARS",
    "DEPTH_LIMIT",
    "FALLBACK_ON_ERROR",
    "INLINE_TEMPLATES",
    "MAINTENANCE_TAGS",
    "MATH_PLACEHOLDER",
    "TOO_DEEP",
    "CleanResult",
    "Fallback",
    "TagSpec",
    "TemplateArgs",
    "WikitextError",
    "canonical_tag_name",
    "clean_wikitext",
    "clean_wikitext_result",
    "extract_tags",
]
