"""``ragmeter._segment_cache``: a cache names its file when printed."""

from __future__ import annotations

from ragmeter._segment_cache import SegmentCache


def test_a_cache_shows_its_file(tmp_path):
    path = tmp_path / "s.sqlite3"
    with SegmentCache(path) as c:
        assert repr(c) == f"SegmentCache({str(path)!r})"
