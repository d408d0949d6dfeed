"""One release order everywhere: PEP 440's, with a readable fallback for tags it cannot read."""

from __future__ import annotations

from crawler.base.releases import release_key
from crawler.consume import lineage
from crawler.consume.site_index import _version_key
from crawler.versions import history, tags


def test_pre_releases_come_before_their_release_and_post_releases_after():
    mixed = ["v0.7.0", "0.6.6.post1", "v0.7.0rc1", "0.6.6", "1.10", "1.9"]
    want = ["0.6.6", "0.6.6.post1", "v0.7.0rc1", "v0.7.0", "1.9", "1.10"]
    assert sorted(mixed, key=release_key) == want
    # every place that orders releases agrees (they each had their own order before)
    assert sorted(mixed, key=tags.version_key) == want
    assert sorted(mixed, key=history.release_order) == want
    assert sorted(mixed, key=_version_key) == want
    assert sorted(mixed, key=lineage.version_key) == want


def test_a_tag_pep_440_cannot_read_goes_by_its_numbers_and_a_huge_one_stays_small():
    assert release_key("release-1.2") == release_key("1.2") < release_key("1.10")
    assert release_key("no numbers") == release_key("0")
    assert release_key("v" + "9" * 5000) == release_key("999999999")  # no 5000-digit integer


def test_a_local_tag_is_no_part_of_the_release_a_paste_names():
    assert lineage.version_key("0.6.3+cu118") == lineage.version_key("v0.6.3")
    assert lineage.version_key("latest") is None
