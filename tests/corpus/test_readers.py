"""Readers against the real shared dumps, histories and topics, and against broken inputs.

Expected values were read by hand from the files in ../shared/data (noted beside each);
whole-file checks compare with an independent ElementTree parse of the same bytes.
"""

from __future__ import annotations

import bz2
import datetime as dt
import gzip
import hashlib
import json
import lzma
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from freshwiki.corpus.readers import (
    SYNTHETIC_ID_BASE,
    DumpReadError,
    MultistreamIndex,
    ReadReport,
    detect_format,
    is_synthetic_id,
    iter_jsonl,
    iter_latest,
    iter_pages,
    iter_revisions,
    iter_topics,
    read_page_at,
    read_source,
    synthetic_id,
)
from freshwiki.errors import FreshwikiError
from freshwiki.records import Contributor, PageRef, Revision

SAMPLE = "wikipedia/dumps/enwiki-pages-articles-sample.xml.bz2"
HISTORIES = "wikipedia/histories"
TOPICS = "wikipedia/topics"
UTC = dt.UTC


def ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


# --------------------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def sample_xml(shared_data: Path) -> bytes:
    return bz2.decompress((shared_data / SAMPLE).read_bytes())


def split_dump(xml: bytes) -> tuple[bytes, list[bytes], bytes]:
    """(header with siteinfo, each '  <page>...</page>\\n', '</mediawiki>...')."""
    first, end = xml.index(b"  <page>"), xml.rindex(b"</mediawiki>")
    pages = [b"  <page>" + chunk for chunk in xml[first:end].split(b"  <page>")[1:]]
    return xml[:first], pages, xml[end:]


def write(path: Path, *parts: bytes) -> Path:
    with open(path, "wb") as fh:
        for part in parts:
            fh.write(part)
    return path


def five_page_dump(sample_xml: bytes, page3: Any = None) -> tuple[bytes, list[bytes]]:
    header, pages, footer = split_dump(sample_xml)
    pages = pages[:5]
    if page3 is not None:
        pages[2] = page3(pages[2])
    return header + b"".join(pages) + footer, pages


def page_ids(revisions: list[Revision]) -> list[int]:
    return [r.page.id for r in revisions]


def oracle(xml: bytes) -> list[dict[str, Any]]:
    """Every revision's fields, by xml.etree (whole document in memory: fine for tests)."""
    def local(tag: str) -> str:
        return tag.rpartition("}")[2]

    out = []
    for page in ET.fromstring(xml):
        if local(page.tag) != "page":
            continue
        fields = {local(c.tag): c for c in page}
        redirect = fields.get("redirect")
        for rev in page:
            if local(rev.tag) != "revision":
                continue
            r = {local(c.tag): c for c in rev}
            who = r.get("contributor")
            names = {local(c.tag): c.text for c in who} if who is not None else {}
            out.append({
                "page_id": int(fields["id"].text or ""),
                "title": fields["title"].text,
                "ns": int(fields["ns"].text or "") if "ns" in fields else 0,
                "redirect": redirect.get("title") if redirect is not None else None,
                "id": int(r["id"].text or ""),
                "parent_id": int(r["parentid"].text or "") if "parentid" in r else None,
                "timestamp": r["timestamp"].text,
                "username": names.get("username"),
                "ip": names.get("ip"),
                "comment": r["comment"].text if "comment" in r else None,
                "minor": "minor" in r,
                "sha1": (r["sha1"].text or None) if "sha1" in r else None,
                "text": r["text"].text or "",
            })
    return out


def as_fields(rev: Revision) -> dict[str, Any]:
    who = rev.contributor or Contributor()
    return {
        "page_id": rev.page.id, "title": rev.page.title, "ns": rev.page.namespace,
        "redirect": rev.page.redirect, "id": rev.id, "parent_id": rev.parent_id,
        "timestamp": rev.timestamp.strftime("%Y-%m-%dT%H:%M:%SZ"), "username": who.username,
        "ip": who.ip, "comment": rev.comment, "minor": rev.minor, "sha1": rev.sha1,
        "text": rev.text,
    }


# --------------------------------------------------------------------------- the real sample dump


def test_sample_dump_has_206_pages_100_redirects(shared_data: Path) -> None:
    report = ReadReport()
    revisions = list(iter_revisions(shared_data / SAMPLE, namespaces=None, report=report))
    assert len(revisions) == 206 and len({r.page.id for r in revisions}) == 206
    assert sum(r.page.redirect is not None for r in revisions) == 100
    # 205 pages in ns 0 and one in ns 4, itself a redirect: 106 articles, as the README says.
    assert sorted({r.page.namespace for r in revisions}) == [0, 4]
    assert sum(r.page.redirect is None for r in revisions) == 106
    assert (report.pages, report.revisions, report.files) == (206, 206, 1)
    assert report.bytes_read == 6_089_746  # `bzcat ... | wc -c`
    assert report.compressed_bytes_read == (shared_data / SAMPLE).stat().st_size
    assert not report.skipped and report.failure is None


def test_sample_dump_default_keeps_articles_only(shared_data: Path) -> None:
    report = ReadReport()
    revisions = list(read_source(shared_data / SAMPLE, report=report))
    assert len(revisions) == 205 and report.pages_filtered == 1
    assert all(r.page.namespace == 0 for r in revisions)
    assert "Wikipedia:Adding Wikipedia articles to Nupedia" not in {r.page.title for r in revisions}


def test_sample_dump_exact_values(shared_data: Path) -> None:
    revisions = {r.page.title: r for r in iter_revisions(shared_data / SAMPLE, namespaces=None)}
    first = revisions["AccessibleComputing"]  # the first page, read off `bzcat | head`
    assert first == Revision(
        page=PageRef(10, "AccessibleComputing", 0, "Computer accessibility"),
        id=631144794, parent_id=381202555, timestamp=ts("2014-10-26T04:50:23Z"),
        contributor=Contributor(username="Paine Ellsworth", user_id=9092818),
        comment="add [[WP:RCAT|rcat]]s", sha1="4ro7vvppa5kmm0o1egfjztzcwd0vabw",
        text="#REDIRECT [[Computer accessibility]]\n\n{{Redr|move|from CamelCase|up}}",
        size=None,  # this gensim slice has no bytes= attribute
    )
    anarchism = revisions["Anarchism"]
    assert (anarchism.page.id, anarchism.id, anarchism.parent_id) == (12, 716551092, 714146352)
    assert anarchism.timestamp == ts("2016-04-22T10:19:33Z")
    assert anarchism.timestamp.tzinfo is UTC
    assert anarchism.contributor == Contributor(ip="85.193.216.88")
    assert anarchism.contributor.is_anonymous
    assert anarchism.comment == "a better word;  use [[plain English]] -> [[WP:MOS]]"  # &gt;
    assert anarchism.sha1 == "rsnewg0ts9n2ypmf4j3levkp83up1l6"
    assert anarchism.text.startswith("{{Redirect2|Anarchist|Anarchists|the fictional character|")
    assert anarchism.page.redirect is None and not anarchism.minor
    ipv6 = revisions["Agricultural science"]
    assert ipv6.contributor == Contributor(ip="2601:0:502:440:1119:806:F740:B3C9")
    last = list(revisions.values())[-1]
    assert (last.page.title, last.page.id, last.id) == ("Algorithm", 775, 717822654)
    assert last.minor
    assert last.contributor == Contributor(username="Salon Essahj", user_id=5887941)
    assert last.comment == "Minor wording edits"
    assert last.text.endswith("[[Category:Theoretical computer science]]")
    nupedia = revisions["Wikipedia:Adding Wikipedia articles to Nupedia"]
    assert nupedia.page == PageRef(724, nupedia.page.title, 4, "Wikipedia:Nupedia and Wikipedia")


def test_sample_dump_matches_an_independent_parse(shared_data: Path, sample_xml: bytes) -> None:
    ours = [as_fields(r) for r in iter_revisions(shared_data / SAMPLE, namespaces=None)]
    assert ours == oracle(sample_xml)


def test_latest_and_pages_agree_on_a_one_revision_dump(shared_data: Path) -> None:
    revisions = list(iter_revisions(shared_data / SAMPLE))
    assert list(iter_latest(shared_data / SAMPLE)) == revisions
    pages = list(iter_pages(shared_data / SAMPLE))
    assert [(p, rs) for p, rs in pages] == [(r.page, [r]) for r in revisions]


def test_table_markup_dump_without_siteinfo(shared_data: Path) -> None:
    revisions = list(iter_revisions(shared_data / "wikipedia/dumps/enwiki-table-markup.xml.bz2"))
    assert [r.page.title for r in revisions] == [
        "Constructive vote of no confidence", "List of Prison Break characters",
        "Academy Award for Best Production Design", "Economy of Estonia", "Brahui language",
    ]
    estonia = revisions[3]
    assert (estonia.page.id, estonia.id, estonia.parent_id) == (9391, 815453970, 814126719)
    assert estonia.contributor == Contributor(ip="194.204.48.49")
    assert estonia.comment == "/* Modernisation and liberalisation */ wrong in 2017"
    assert estonia.sha1 == "044rlx4zq41be5uoeqbwwviwmg3bzdo"


# --------------------------------------------------------------------------- real histories


def test_pear_history_export_0_3(shared_data: Path) -> None:
    path = shared_data / HISTORIES / "article-pear.xml"
    ((page, revisions),) = list(iter_pages(path))
    assert page == PageRef(24278, "Pear", 0, None)  # no <ns> in schema 0.3: derived
    assert [r.id for r in revisions] == [185185, 185241, 185408, 188924]
    first, second, _, fourth = revisions
    assert first.timestamp == ts("2002-02-25T15:43:11Z")
    # The 2002 conversion script is recorded as an <ip>, not a user.
    assert first.contributor == Contributor(ip="Conversion script")
    assert first.minor and first.comment == "Automated conversion"
    assert (first.parent_id, first.sha1, first.size) == (None, None, None)
    assert first.text.startswith("Pears are [[tree]]s of the [[genus]] <em>Pyrus</em>")
    assert second.contributor == Contributor(username="Quercusrobur", user_id=3741)
    assert (second.comment, second.minor) == (None, False)
    assert second.text.endswith("\n\n[[propagating apples and other fruit trees]]")
    assert fourth.contributor == Contributor(username="PierreAbbat", user_id=1123)
    assert (fourth.comment, fourth.minor) == ("sp", True)
    assert fourth.timestamp == ts("2002-08-31T05:53:10Z")


def test_pyrus_bare_redirect_and_revert(shared_data: Path) -> None:
    revisions = list(iter_revisions(shared_data / HISTORIES / "article-pyrus.xml"))
    assert len(revisions) == 6
    # Schema 0.3's bare <redirect /> names no target: left None.
    assert revisions[0].page == PageRef(9261472, "Pyrus", 0, None)
    assert revisions[0].text == "#REDIRECT [[Pyrus (brand)]]"
    rv = revisions[3]
    assert (rv.id, rv.comment, rv.minor) == (190346463, "rv", True)
    assert rv.contributor == Contributor(username="IceCreamAntisocial", user_id=346507)
    assert (revisions[-1].comment or "").startswith("Reverted edits by [[Special:Contributions/")


def test_pear_history_0_10(shared_data: Path) -> None:
    (rev,) = list(iter_revisions(shared_data / HISTORIES / "article-pear-0.10.xml"))
    assert (rev.page.id, rev.id, rev.parent_id) == (24278, 638548877, 638548865)
    assert rev.contributor == Contributor(username="ClueBot NG", user_id=13286072)
    assert (rev.comment or "").startswith("Reverting possible vandalism by [[Special:Contributi")
    assert rev.size == 25986 == len(rev.text.encode())
    assert rev.timestamp == ts("2014-12-17T21:09:18Z")


def test_pair_talk_namespace_and_escaped_entity(shared_data: Path) -> None:
    path = shared_data / HISTORIES / "pair-0.10.xml"
    pages = list(iter_pages(path, namespaces=None))
    assert [(p.id, p.title, p.namespace) for p, _ in pages] == [
        (19252820, "Çullu, Agdam", 0), (19252824, "Talk:Çullu, Agdam", 1)]
    first = pages[0][1][0]
    # "&amp;#32;" in the XML is the literal text "&#32;" in the comment.
    assert first.comment == "moved [[Çullu, Agdam]] to [[Çullu, Quzanlı]]:&#32;dab"
    assert (first.size, first.sha1) == (30, "9onarlg8ywgp11wnrddqebdry0jyz56")
    assert first.size == len(first.text.encode()) != len(first.text)  # bytes, not chars
    talk = pages[1][1]
    assert [r.id for r in talk] == [237382916, 237383127]
    assert talk[1].parent_id == 237382916 and talk[1].text == "{{DisambigProject}}"
    assert [p.title for p, _ in iter_pages(path)] == ["Çullu, Agdam"]


def test_simplewiki_history_values(shared_data: Path) -> None:
    path = shared_data / HISTORIES / "simplewiki-history-sample.xml"
    revisions = {r.id: r for r in iter_revisions(path, namespaces=None)}
    assert len(revisions) == 33
    registered = revisions[360840]
    assert registered == Revision(
        page=PageRef(45046, "User:Ryulong", 2), id=360840, parent_id=360821,
        timestamp=ts("2007-03-27T11:35:50Z"),
        contributor=Contributor(username="Eptalon", user_id=2133), minor=True,
        comment="Reverted edits by [[Special:Contributions/! - JEWISH BOT 18 - !|! - JEWISH "
                "BOT 18 - !]] ([[User talk:! - JEWISH BOT 18 - !|talk]]) to last version by "
                "[[User:Ryulong|Ryulong]]",
        sha1="61o9wqbehiqpmke7163b1675fic2cri", size=12, text="{{babel|en}}",
    )
    ip = revisions[1128090]
    assert ip == Revision(
        page=PageRef(45046, "User:Ryulong", 2), id=1128090, parent_id=857621,
        timestamp=ts("2008-10-24T00:18:38Z"), contributor=Contributor(ip="208.99.75.47"),
        comment=None, sha1="6zb5re0eucz7cxavev1yca10r9dk9e9", size=18,
        text="BOBABOBABO IS BACK",
    )
    # Revision-deleted: contributor, comment and text hidden, bytes="-1", empty <sha1/>.
    hidden = revisions[1714215]
    assert (hidden.contributor, hidden.comment, hidden.text, hidden.size, hidden.sha1) == (
        None, None, "", None, None)
    assert hidden.parent_id == 1643771
    # Blanked (not deleted): <text bytes="0" />, contributor hidden, comment kept.
    blank = revisions[360821]
    assert (blank.text, blank.size, blank.contributor) == ("", 0, None)
    assert blank.comment == "Removing all content from page"
    assert blank.sha1 == "phoiac9h4m842xq45sp7s6u21eteeq1"
    danish = revisions[2622350]
    assert danish.page == PageRef(279900, "Talk:Cristiano Ronaldo", 1)
    assert danish.text == "HAN ER LÆKKER!!" and danish.size == 16  # Æ is two bytes
    assert danish.contributor == Contributor(ip="93.167.153.229")


def test_simplewiki_history_matches_an_independent_parse(shared_data: Path) -> None:
    path = shared_data / HISTORIES / "simplewiki-history-sample.xml"
    expected = oracle(path.read_bytes())
    for row in expected:  # the oracle sees hidden fields' empty elements; we map them to None
        row["comment"] = row["comment"] or None
    ours = [as_fields(r) for r in iter_revisions(path, namespaces=None)]
    assert ours == expected


def test_simplewiki_groups_latest_and_namespace_filter(shared_data: Path) -> None:
    path = shared_data / HISTORIES / "simplewiki-history-sample.xml"
    pages = list(iter_pages(path, namespaces=None))
    assert [(p.title, len(rs)) for p, rs in pages] == [
        ("User:Ryulong", 18), ("Talk:Cristiano Ronaldo", 15)]
    assert [r.id for r in iter_latest(path, namespaces=None)] == [5566832, 8750749]
    assert [r.id for r in iter_latest(path, namespaces={1})] == [8750749]
    report = ReadReport()
    assert list(iter_revisions(path, report=report)) == []  # default: articles (ns 0) only
    assert (report.pages_filtered, report.revisions) == (2, 0)


@pytest.mark.parametrize("kind", ["gzip", "xz", "bz2"])
def test_compressed_histories_read_the_same(shared_data: Path, tmp_path: Path, kind: str) -> None:
    source = shared_data / HISTORIES / "simplewiki-history-sample.xml"
    data = source.read_bytes()
    packers: dict[str, Callable[[bytes], bytes]] = {
        "gzip": gzip.compress, "xz": lzma.compress, "bz2": bz2.compress}
    packed = packers[kind](data)
    path = write(tmp_path / "history.dat", packed)  # the name says nothing: bytes decide
    report = ReadReport()
    assert list(iter_revisions(path, namespaces=None, report=report)) == list(
        iter_revisions(source, namespaces=None))
    assert report.bytes_read == len(data) and report.compressed_bytes_read == len(packed)


# --------------------------------------------------------------------------- multistream


def build_multistream(
    tmp_path: Path, sample_xml: bytes, per_stream: int = 40
) -> tuple[Path, Path, list[list[int]]]:
    """A real-format multistream dump: header, groups of pages, footer, each its own stream."""
    header, pages, footer = split_dump(sample_xml)
    out = bytearray(bz2.compress(header))
    lines, groups = [], []
    for i in range(0, len(pages), per_stream):
        group = pages[i : i + per_stream]
        offset = len(out)
        ids = []
        for page in group:
            m_id = re.search(rb"<id>(\d+)</id>", page)
            m_title = re.search(rb"<title>([^<]*)</title>", page)
            assert m_id and m_title
            ids.append(int(m_id[1]))
            lines.append(f"{offset}:{int(m_id[1])}:{m_title[1].decode()}\n")
        groups.append(ids)
        out += bz2.compress(b"".join(group))
    out += bz2.compress(footer)
    dump = write(tmp_path / "enwiki-sample-multistream.xml.bz2", bytes(out))
    index = write(tmp_path / "enwiki-sample-multistream-index.txt.bz2",
                  bz2.compress("".join(lines).encode()))
    return dump, index, groups


def test_multistream_dump_and_index(
    shared_data: Path, sample_xml: bytes, tmp_path: Path
) -> None:
    dump, index_path, groups = build_multistream(tmp_path, sample_xml)
    # Read whole, the concatenated streams are the same dump.
    assert list(iter_revisions(dump, namespaces=None)) == list(
        iter_revisions(shared_data / SAMPLE, namespaces=None))
    index = MultistreamIndex(index_path)
    entries = list(index)
    assert len(entries) == 206 and len(groups) == 6
    offsets = list(index.offsets())
    assert offsets == sorted(set(offsets)) and len(offsets) == 6
    for offset, ids in zip(offsets, groups, strict=True):
        assert page_ids(read_page_at(dump, offset)) == ids
    entry = index.find("Anarchism")
    assert entry is not None and entry.page_id == 12 and entry.offset == offsets[0]
    by_id = index.find_id(775)
    assert by_id is not None and by_id.title == "Algorithm" and by_id.offset == offsets[-1]
    (algorithm,) = [r for r in read_page_at(dump, by_id.offset) if r.page.id == 775]
    assert algorithm.id == 717822654 and algorithm.text.endswith("computer science]]")
    assert index.find("No such page") is None
    # By default read_page_at keeps every namespace; a filter applies if asked.
    (nupedia,) = [e for e in entries if e.page_id == 724]
    assert 724 in page_ids(read_page_at(dump, nupedia.offset))
    assert 724 not in page_ids(read_page_at(dump, nupedia.offset, namespaces={0}))


def test_multistream_bad_offsets_and_escaped_titles(sample_xml: bytes, tmp_path: Path) -> None:
    dump, _, _ = build_multistream(tmp_path, sample_xml)
    with pytest.raises(DumpReadError, match="no bz2 stream starts at byte 7"):
        read_page_at(dump, 7)
    with pytest.raises(DumpReadError, match="outside the file"):
        read_page_at(dump, dump.stat().st_size + 5)
    plain = write(tmp_path / "index.txt", b"600:1:AT&amp;T\n600:2:&quot;Weird&quot; Al\n"
                                          b"9000:3:Talk:A:B\n")
    assert [(e.offset, e.page_id, e.title) for e in MultistreamIndex(plain)] == [
        (600, 1, "AT&T"), (600, 2, '"Weird" Al'), (9000, 3, "Talk:A:B")]
    broken = write(tmp_path / "broken-index.txt", b"600:1:A\nnot an index line\n")
    with pytest.raises(DumpReadError, match="line 2 is not offset:page_id:title"):
        list(MultistreamIndex(broken))


def test_multistream_truncated_stream(sample_xml: bytes, tmp_path: Path) -> None:
    dump, index, _ = build_multistream(tmp_path, sample_xml)
    offsets = list(MultistreamIndex(index).offsets())
    cut = write(tmp_path / "cut.xml.bz2", dump.read_bytes()[: offsets[2] + 1000])
    with pytest.raises(DumpReadError, match="bz2 stream ends early") as info:
        read_page_at(cut, offsets[2])
    assert "cut.xml.bz2" in str(info.value) and info.value.hint


# --------------------------------------------------------------------------- bad input


def test_truncated_bz2_keeps_earlier_pages_and_names_the_offset(
    shared_data: Path, tmp_path: Path
) -> None:
    data = (shared_data / SAMPLE).read_bytes()
    half = len(data) // 2
    path = write(tmp_path / "cut.xml.bz2", data[:half])
    full = list(iter_revisions(shared_data / SAMPLE, namespaces=None))
    for skip in (False, True):  # truncation is never skipped silently
        got: list[Revision] = []
        report = ReadReport()
        with pytest.raises(DumpReadError) as info:
            for rev in iter_revisions(path, namespaces=None, skip_bad_pages=skip, report=report):
                got.append(rev)
        assert 0 < len(got) < 206 and got == full[: len(got)]
        err = info.value
        assert isinstance(err, FreshwikiError)
        assert "cut.xml.bz2" in err.message and "ends early" in err.message
        assert err.fault.compressed_offset == half and f"~{half:,}" in err.message
        assert err.fault.offset_in == "decompressed XML" and err.fault.offset is not None
        assert err.hint is not None and "re-download" in err.hint
        assert report.failure == err.fault and report.revisions == len(got)


def test_corrupt_bz2_block(shared_data: Path, tmp_path: Path) -> None:
    data = bytearray((shared_data / SAMPLE).read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = bytes(64)
    path = write(tmp_path / "corrupt.xml.bz2", bytes(data))
    with pytest.raises(DumpReadError, match="corrupt") as info:
        list(iter_revisions(path, skip_bad_pages=True))
    assert info.value.hint is not None and "re-download" in info.value.hint


def test_truncated_plain_xml_inside_a_page(sample_xml: bytes, tmp_path: Path) -> None:
    dump, pages = five_page_dump(sample_xml)
    cut_at = dump.index(pages[3]) + len(pages[3]) // 2  # in the middle of page 4's text
    path = write(tmp_path / "cut.xml", dump[:cut_at])
    got: list[Revision] = []
    with pytest.raises(DumpReadError, match="truncated") as info:
        got.extend(iter_revisions(path, namespaces=None))
    assert page_ids(got) == [10, 12, 13]
    assert info.value.fault.page_id == 14 and info.value.fault.title == "AfghanistanGeography"
    assert info.value.fault.offset == dump.index(b"<revision>", dump.index(pages[3]))
    assert "byte" in info.value.message and "of the file" in info.value.message


def test_truncated_plain_xml_between_pages(sample_xml: bytes, tmp_path: Path) -> None:
    dump, pages = five_page_dump(sample_xml)
    path = write(tmp_path / "cut.xml", dump[: dump.index(pages[4])])
    got: list[Revision] = []
    with pytest.raises(DumpReadError, match=r"ends before </mediawiki>"):
        got.extend(iter_revisions(path, namespaces=None))
    assert len(got) == 4


def test_unclosed_tag_in_page_3(sample_xml: bytes, tmp_path: Path) -> None:
    def unclose(page: bytes) -> bytes:
        assert page.count(b"</comment>") == 1
        return page.replace(b"</comment>", b"")

    dump, pages = five_page_dump(sample_xml, unclose)
    path = write(tmp_path / "bad.xml", dump)
    got: list[Revision] = []
    with pytest.raises(DumpReadError) as info:
        got.extend(iter_revisions(path, namespaces=None))
    assert page_ids(got) == [10, 12]
    fault = info.value.fault
    assert (fault.page_id, fault.title) == (13, "AfghanistanHistory")
    page3_start = dump.index(pages[2])
    assert fault.offset is not None and page3_start < fault.offset < page3_start + len(pages[2])
    assert "not well-formed" in fault.error and "bad.xml" in info.value.message
    assert "id 13 'AfghanistanHistory'" in info.value.message
    assert info.value.hint is not None and "skip_bad_pages=True" in info.value.hint

    report = ReadReport()
    kept = list(iter_revisions(path, namespaces=None, skip_bad_pages=True, report=report))
    assert page_ids(kept) == [10, 12, 14, 15]
    (skipped,) = report.skipped
    assert (skipped.page_id, skipped.title, skipped.offset) == (13, "AfghanistanHistory",
                                                                 fault.offset)
    assert report.pages == 4 and report.failure is None
    assert "AfghanistanHistory" in report.summary()


def test_unclosed_page_is_isolated(sample_xml: bytes, tmp_path: Path) -> None:
    """Page 3 loses its end (</revision> and </page>): page 4 must still be found."""
    def cut(page: bytes) -> bytes:
        return page[: page.index(b"</text>") + 7] + b"\n"

    dump, _ = five_page_dump(sample_xml, cut)
    path = write(tmp_path / "bad.xml", dump)
    with pytest.raises(DumpReadError, match="no </revision> before <page>"):
        list(iter_revisions(path, namespaces=None))
    report = ReadReport()
    kept = list(iter_revisions(path, namespaces=None, skip_bad_pages=True, report=report))
    assert page_ids(kept) == [10, 12, 14, 15]
    assert [(s.page_id, s.title) for s in report.skipped] == [(13, "AfghanistanHistory")]


def test_malformed_page_header(sample_xml: bytes, tmp_path: Path) -> None:
    dump, _ = five_page_dump(sample_xml, lambda p: p.replace(b"</title>", b"", 1))
    path = write(tmp_path / "bad.xml", dump)
    report = ReadReport()
    kept = list(iter_revisions(path, namespaces=None, skip_bad_pages=True, report=report))
    assert page_ids(kept) == [10, 12, 14, 15]
    (skipped,) = report.skipped
    assert skipped.page_id == 13 and "page header is not well-formed" in skipped.error


def test_invalid_utf8_in_page_text(sample_xml: bytes, tmp_path: Path) -> None:
    def garble(page: bytes) -> bytes:
        opening = b'<text xml:space="preserve">'
        return page.replace(opening, opening + b"\xff\xfe", 1)

    dump, _ = five_page_dump(sample_xml, garble)
    path = write(tmp_path / "bad.xml.bz2", bz2.compress(dump))
    got: list[Revision] = []
    with pytest.raises(DumpReadError) as info:
        got.extend(iter_revisions(path, namespaces=None))
    assert page_ids(got) == [10, 12]
    fault = info.value.fault
    assert (fault.page_id, fault.title) == (13, "AfghanistanHistory")
    text_at = dump.index(b"\xff\xfe")
    assert fault.offset is not None and abs(fault.offset - text_at) < 8
    assert fault.offset_in == "decompressed XML" and "decompressed XML" in info.value.message
    report = ReadReport()
    kept = list(iter_revisions(path, namespaces=None, skip_bad_pages=True, report=report))
    assert page_ids(kept) == [10, 12, 14, 15] and report.skipped[0].page_id == 13


def test_bad_revision_in_a_history_skips_the_rest_of_that_page(
    shared_data: Path, tmp_path: Path
) -> None:
    data = (shared_data / HISTORIES / "simplewiki-history-sample.xml").read_bytes()
    bad = data.replace(b"<timestamp>2008-10-24T00:18:38Z</timestamp>",  # revision 1128090
                       b"<timestamp>yesterday</timestamp>")
    path = write(tmp_path / "history.xml", bad)
    report = ReadReport()
    got = list(iter_revisions(path, namespaces=None, skip_bad_pages=True, report=report))
    assert [r.page.id for r in got] == [45046] * 7 + [279900] * 15
    (skipped,) = report.skipped
    assert (skipped.page_id, skipped.revisions_yielded) == (45046, 7)
    assert "timestamp" in skipped.error and "7 earlier revision(s)" in str(skipped)
    # Grouped readers drop the damaged page whole: a partial history would look complete.
    assert [p.id for p, _ in iter_pages(path, namespaces=None, skip_bad_pages=True)] == [279900]
    # iter_latest parses only the last revision, so the damage earlier does not touch it.
    assert [r.id for r in iter_latest(path, namespaces=None)] == [5566832, 8750749]


def test_a_50_mb_page_and_500_deep_templates(sample_xml: bytes, tmp_path: Path) -> None:
    header, pages, footer = split_dump(sample_xml)
    unit = b"word &lt;ref&gt;{{x}} "  # 22 bytes of XML, 16 characters of text
    repeats = 50 * 2**20 // len(unit) + 1
    nested = "{{a|" * 500 + "deep" + "}}" * 500
    path = tmp_path / "huge.xml"
    with open(path, "wb") as fh:
        fh.write(header + pages[0])
        fh.write(b"  <page>\n    <title>Huge</title>\n    <ns>0</ns>\n    <id>900</id>\n"
                 b"    <revision>\n      <id>9000</id>\n      <timestamp>2024-01-02T03:04:05Z"
                 b"</timestamp>\n      <text xml:space=\"preserve\" bytes=\"%d\">" % (16 * repeats))
        for _ in range(repeats // 4096):
            fh.write(unit * 4096)
        fh.write(unit * (repeats % 4096))
        fh.write(b"</text>\n    </revision>\n  </page>\n")
        fh.write(b"  <page>\n    <title>Deep</title>\n    <ns>0</ns>\n    <id>901</id>\n"
                 b"    <revision>\n      <id>9001</id>\n      <timestamp>2024-01-02T03:04:05Z"
                 b"</timestamp>\n      <text>" + nested.encode() + b"</text>\n    </revision>\n"
                 b"  </page>\n")
        fh.write(pages[1] + footer)
    assert path.stat().st_size > 50 * 2**20
    got = list(iter_revisions(path, namespaces=None))
    assert page_ids(got) == [10, 900, 901, 12]
    huge = got[1]
    assert huge.size == 16 * repeats == len(huge.text)
    assert huge.text.startswith("word <ref>{{x}} word") and huge.text.endswith("{{x}} ")
    assert got[2].text == nested


def test_empty_inputs(tmp_path: Path, sample_xml: bytes) -> None:
    header, _, footer = split_dump(sample_xml)
    for name, data in (("empty.xml", b""), ("empty.xml.bz2", b""),
                       ("blank.xml", b"  \n\n"), ("empty-bz2.xml.bz2", bz2.compress(b""))):
        path = write(tmp_path / name, data)
        with pytest.raises(DumpReadError, match=r"empty|only whitespace") as info:
            list(iter_revisions(path))
        assert name in info.value.message and info.value.hint
    no_pages = write(tmp_path / "no-pages.xml.bz2", bz2.compress(header + footer))
    report = ReadReport()
    assert list(iter_revisions(no_pages, report=report)) == [] and report.failure is None
    bare = write(tmp_path / "bare.xml",
                 b'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" />\n')
    assert list(iter_pages(bare)) == []


def test_not_a_dump(tmp_path: Path) -> None:
    with pytest.raises(DumpReadError, match="is not XML"):
        list(iter_revisions(write(tmp_path / "a.xml", b'{"title": "x"}\n')))
    with pytest.raises(DumpReadError, match="no MediaWiki XML"):
        list(iter_revisions(write(tmp_path / "b.xml", b"<html><body>hi</body></html>")))
    with pytest.raises(DumpReadError, match="7z-compressed") as info:
        iter_revisions(write(tmp_path / "c.xml.7z", b"7z\xbc\xaf\x27\x1c\x00\x04"))
    assert info.value.hint is not None and "bzip2" in info.value.hint


def test_missing_path_fails_at_call_time(tmp_path: Path) -> None:
    missing = tmp_path / "nope.xml.bz2"
    for reader in (iter_revisions, iter_pages, iter_latest, read_source, iter_jsonl,
                   iter_topics, MultistreamIndex):
        with pytest.raises(DumpReadError, match="no such file") as info:
            reader(missing)  # no next(): the error comes from the call itself
        assert "nope.xml.bz2" in info.value.message and info.value.hint == "check the path"
    with pytest.raises(DumpReadError, match="is a directory"):
        iter_revisions(tmp_path)


def test_stray_garbage_between_pages_is_reported(sample_xml: bytes, tmp_path: Path) -> None:
    header, pages, footer = split_dump(sample_xml)
    path = write(tmp_path / "stray.xml", header + pages[0] + b"  </revision>\n" + pages[1]
                 + footer)
    with pytest.raises(DumpReadError, match=r"unexpected </revision> outside any page"):
        list(iter_revisions(path))
    report = ReadReport()
    assert page_ids(list(iter_revisions(path, skip_bad_pages=True, report=report))) == [10, 12]
    assert report.skipped[0].page_id is None and report.skipped[0].offset is not None


# --------------------------------------------------------------------------- extracted text


def jsonl(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records)


def test_wikiextractor_folder(tmp_path: Path) -> None:
    root = tmp_path / "extracted"
    (root / "AA").mkdir(parents=True)
    (root / "AB").mkdir()
    write(root / "AA" / "wiki_00", jsonl(
        {"id": "12", "revid": "716551092", "url": "https://en.wikipedia.org/wiki?curid=12",
         "title": "Anarchism", "text": "Anarchism is a political philosophy.\n\nHistory."},
        {"id": "25", "revid": "7", "url": "u", "title": "Autism", "text": "Autism is..."}))
    write(root / "AA" / "wiki_01", jsonl({"id": "39", "revid": "8", "url": "u",
                                          "title": "Albedo", "text": "Albedo."}))
    write(root / "AB" / "wiki_00.bz2", bz2.compress(jsonl(
        {"id": "290", "revid": "9", "url": "u", "title": "A", "text": "A is a letter."})))
    write(root / ".DS_Store", b"\x00\x01junk")  # hidden files are not sources
    assert detect_format(root) == "directory"
    assert detect_format(root / "AA" / "wiki_00") == "jsonl"
    when = dt.datetime(2016, 5, 1, tzinfo=UTC)
    report = ReadReport()
    got = list(read_source(root, timestamp=when, report=report))
    assert [(r.page.id, r.id, r.page.title) for r in got] == [
        (12, 716551092, "Anarchism"), (25, 7, "Autism"), (39, 8, "Albedo"), (290, 9, "A")]
    assert got[0].text == "Anarchism is a political philosophy.\n\nHistory."
    assert all(r.timestamp == when and r.text_format == "plain" for r in got)
    assert (report.files, report.pages, report.revisions) == (3, 4, 4)
    assert list(read_source(root, namespaces={1})) == []  # extracted text is namespace 0


def test_plain_jsonl_timestamps_and_synthetic_ids(tmp_path: Path) -> None:
    path = write(tmp_path / "notes.jsonl", jsonl(
        {"title": "Pear", "text": "A fruit.", "timestamp": "2023-03-01T12:00:00Z"},
        {"title": "Pear", "text": "A fruit, edited.", "timestamp": "2023-03-02T02:00:00+02:00"},
        {"title": "Apple", "text": "Another fruit.", "timestamp": "2023-03-03T08:00:00"},
        {"title": "Quince", "text": "No time."},
    ) + b"\n")
    os.utime(path, (1_600_000_000, 1_600_000_000))
    got = list(read_source(path))
    assert [r.timestamp for r in got] == [
        ts("2023-03-01T12:00:00Z"), ts("2023-03-02T00:00:00Z"),  # converted to UTC
        ts("2023-03-03T08:00:00Z"),  # naive: taken as UTC
        dt.datetime.fromtimestamp(1_600_000_000, UTC),  # none: the file's mtime
    ]
    assert all(r.timestamp.tzinfo is UTC for r in got)
    pear, pear2, apple, _ = got
    assert pear.page == pear2.page and pear.page.id == synthetic_id("Pear")
    assert pear.id != pear2.id and apple.page.id != pear.page.id
    assert all(is_synthetic_id(r.page.id) and is_synthetic_id(r.id) for r in got)
    assert all(SYNTHETIC_ID_BASE <= r.id < 2**63 for r in got)
    assert synthetic_id("Pear") == synthetic_id("Pear") and not is_synthetic_id(24278)
    # Stable across runs and machines: a fixed value, not Python's salted hash().
    digest = hashlib.blake2b(b"Pear", digest_size=8).digest()
    assert synthetic_id("Pear") == (1 << 62) | (int.from_bytes(digest, "big") >> 2)
    default = dt.datetime(2020, 1, 1, tzinfo=UTC)
    assert list(iter_jsonl(path, timestamp=default))[3].timestamp == default


def test_jsonl_bad_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.jsonl", jsonl({"title": "Good", "text": "ok"})
                 + b'{"title": "Broken", "text": "no end\n'
                 + b'{"title": "Bytes", "text": "\xff\xfe"}\n'
                 + b'["not", "an", "object"]\n'
                 + jsonl({"title": "Missing text"}, {"title": "Also good", "text": "ok"}))
    with pytest.raises(DumpReadError, match="line 2: not valid JSON") as info:
        list(iter_jsonl(path))
    assert info.value.fault.title == "Broken" and info.value.fault.offset == 32
    report = ReadReport()
    got = list(iter_jsonl(path, skip_bad_pages=True, report=report))
    assert [r.page.title for r in got] == ["Good", "Also good"]
    assert [s.error.split(":")[0] for s in report.skipped] == [
        "line 2", "line 3", "line 4", "line 5"]


@pytest.mark.parametrize(("name", "count"), [("head", 5000), ("tail", 5000), ("recent", 419)])
def test_real_topics_files(shared_data: Path, name: str, count: int) -> None:
    path = shared_data / TOPICS / f"{name}_articles_en.json"
    assert detect_format(path) == "topics-json"
    expected = json.loads(path.read_text(encoding="utf-8"))
    report = ReadReport()
    got = list(read_source(path, report=report))
    assert len(got) == len(expected) == count == report.revisions
    assert [(r.page.title, r.text) for r in got] == list(expected.items())
    assert len({r.page.id for r in got}) == count
    assert all(r.text_format == "plain" and is_synthetic_id(r.page.id) for r in got)
    assert report.bytes_read == path.stat().st_size


def test_real_topics_first_entries(shared_data: Path) -> None:
    head = iter_topics(shared_data / TOPICS / "head_articles_en.json")
    first = next(head)
    assert first.page.title == "KickassTorrents"
    assert first.text.startswith("KickassTorrents (commonly abbreviated KAT) was a website")
    recent = next(iter_topics(shared_data / TOPICS / "recent_articles_en.json"))
    assert recent.page.title == "Legalism (Chinese philosophy)"
    assert recent.text.startswith("Fajia (Chinese: 法家; pinyin: fǎjiā), often translated")


def test_topics_streaming_edge_cases(tmp_path: Path) -> None:
    big = "x" * (3 * 2**20) + "\"}{ end"  # longer than a read chunk, with JSON-ish content
    entries = {"A \"quoted\" title": "line\nbreak \\ \u00e9 \U0001F600", "Big": big,
               "Empty": "", "Braces": "{not: json}"}
    path = write(tmp_path / "topics.json", json.dumps(entries, indent=1).encode())
    got = list(iter_topics(path))
    assert {r.page.title: r.text for r in got} == entries
    one_line = write(tmp_path / "one.json", json.dumps({"Pear": "p", "Apple": "a"}).encode())
    assert detect_format(one_line) == "topics-json"
    assert [r.page.title for r in read_source(one_line)] == ["Pear", "Apple"]
    truncated = write(tmp_path / "cut.json", path.read_bytes()[:100])
    with pytest.raises(DumpReadError, match="invalid JSON") as info:
        list(iter_topics(truncated))
    assert "cut.json" in info.value.message
    mixed = write(tmp_path / "mixed.json", b'{"A": "ok", "B": 3, "C": "ok"}')
    with pytest.raises(DumpReadError, match="value is int"):
        list(iter_topics(mixed))
    report = ReadReport()
    assert [r.page.title for r in iter_topics(mixed, skip_bad_pages=True, report=report)] == [
        "A", "C"]
    assert report.skipped[0].title == "B"
    with pytest.raises(DumpReadError, match="not a JSON object"):
        list(iter_topics(write(tmp_path / "list.json", b'["a", "b"]')))


def test_detect_format(tmp_path: Path, shared_data: Path) -> None:
    assert detect_format(shared_data / SAMPLE) == "mediawiki-xml"
    assert detect_format(shared_data / HISTORIES / "article-pear.xml") == "mediawiki-xml"
    assert detect_format(write(tmp_path / "x.jsonl.gz", gzip.compress(b""))) == "jsonl"
    assert detect_format(write(tmp_path / "records.json", jsonl(
        {"title": "A", "text": "a"}, {"title": "B", "text": "b"}))) == "jsonl"
    doc = write(tmp_path / "wiki_00", b'<doc id="12" url="u" title="Anarchism">\nAnarchism\n</doc>')
    with pytest.raises(DumpReadError, match="<doc> output") as info:
        read_source(doc)
    assert info.value.hint == "re-run WikiExtractor with --json"
    with pytest.raises(DumpReadError, match="not a known source format"):
        read_source(write(tmp_path / "notes.txt", b"hello"))
    with pytest.raises(DumpReadError, match="empty"):
        read_source(write(tmp_path / "zero.json", b""))
    (tmp_path / "empty-dir").mkdir()
    with pytest.raises(DumpReadError, match="no files"):
        read_source(tmp_path / "empty-dir")


def test_folder_with_an_unknown_file(tmp_path: Path) -> None:
    root = tmp_path / "mixed"
    root.mkdir()
    write(root / "a.jsonl", jsonl({"title": "A", "text": "a"}))
    write(root / "b.txt", b"just some notes")
    write(root / "c.jsonl", jsonl({"title": "C", "text": "c"}))
    with pytest.raises(DumpReadError, match=r"b\.txt"):
        list(read_source(root))
    report = ReadReport()
    got = list(read_source(root, skip_bad_pages=True, report=report))
    assert [r.page.title for r in got] == ["A", "C"]
    assert report.skipped[0].path.endswith("b.txt")


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_tags_split_across_read_chunks(
    shared_data: Path, sample_xml: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    chunk: int,
) -> None:
    """Tiny reads put every boundary tag across two chunks somewhere: nothing may change."""
    from freshwiki.corpus.readers import _stream, extracted

    history = shared_data / HISTORIES / "simplewiki-history-sample.xml"
    dump, _ = five_page_dump(sample_xml)
    articles = write(tmp_path / "five.xml", dump)
    expected = [list(iter_revisions(p, namespaces=None)) for p in (history, articles)]
    topics = write(tmp_path / "t.json", b'{"A": "ok", "B": 3123456, "C": "o\\"k"}')
    for module in (_stream, extracted):  # dump reads through _stream; topics on their own
        monkeypatch.setattr(module, "_CHUNK", chunk)
    assert [list(iter_revisions(p, namespaces=None)) for p in (history, articles)] == expected
    assert [r.id for r in iter_latest(history, namespaces=None)] == [5566832, 8750749]
    report = ReadReport()
    assert [r.text for r in iter_topics(topics, skip_bad_pages=True, report=report)] == [
        "ok", 'o"k']
    assert report.skipped[0].error == "value is int, not a string"


def test_topics_syntax_error_is_reported_where_it_is(tmp_path: Path) -> None:
    body = b'{"A": "ok", "B" "missing colon", ' + b'"x": "' + b"y" * (3 * 2**20) + b'"}'
    path = write(tmp_path / "bad.json", body)
    with pytest.raises(DumpReadError, match="expected ':'") as info:
        list(iter_topics(path))
    assert info.value.fault.offset == body.index(b'"missing')
    assert "at character 16 of the decoded text" in info.value.message
    path = write(tmp_path / "bad2.json", b'{"A": "ok", "B": tru, "C": "x"}')
    with pytest.raises(DumpReadError, match="invalid JSON: Expecting value") as info:
        list(iter_topics(path))
    assert info.value.fault.offset == 17
