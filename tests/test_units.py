"""Numbers as people read them."""

from __future__ import annotations

import pytest

from idxadvisor.units import human_bytes, human_count, human_impact, human_ms, mask_secrets, printable


@pytest.mark.parametrize(("value", "text"), [
    (0, "0"), (999, "999"), (95_412, "95,412"), (412_300, "412k"), (6_489_000, "6.5M"), (74_140_200, "74M"),
    (1_234_000_000, "1.2B"), (3_200_000_000_000, "3,200B"),
])
def test_counts(value: float, text: str) -> None:
    assert human_count(value) == text


def test_a_count_past_a_floats_range_is_shown() -> None:
    assert (human_count(float("inf")), human_count(float("-inf")), human_count(float("nan"))) == ("∞", "-∞", "?")
    assert human_ms(float("inf")) == "∞"


@pytest.mark.parametrize(("value", "text"), [
    (412, "412 ms"), (2_140, "2.1 s"), (192_000, "3m 12s"), (3_720_000, "1h 02m"),
])
def test_durations(value: float, text: str) -> None:
    assert human_ms(value) == text


@pytest.mark.parametrize(("value", "text"), [
    (512, "512 B"), (153_100_000, "153.1 MB"), (3_900_000_000, "3.9 GB"), (5e15, "5,000.0 TB"),
])
def test_bytes(value: float, text: str) -> None:
    assert human_bytes(value) == text


def test_impact_names_its_unit() -> None:
    assert human_impact(3_900_000_000, "bytes") == "3.9 GB read for nothing"
    assert human_impact(6_489_000, "documents") == "6.5M documents wasted"


@pytest.mark.parametrize(("value", "text"), [
    (99_999.4, "99,999"), (99_999.6, "100k"), (999_499, "999k"), (999_999, "1.0M"), (9_960_000, "10M"),
    (999_999_999, "1.0B"), (9_999_999, "10M"),
])
def test_counts_round_before_choosing_the_unit(value: float, text: str) -> None:
    assert human_count(value) == text


@pytest.mark.parametrize(("value", "text"), [
    (999.4, "999 ms"), (999.6, "1.0 s"), (59_949, "59.9 s"), (59_999, "1m 00s"), (119_600, "2m 00s"),
    (3_599_600, "1h 00m"), (3_600_000, "1h 00m"),
])
def test_durations_round_before_choosing_the_unit(value: float, text: str) -> None:
    assert human_ms(value) == text


@pytest.mark.parametrize(("value", "text"), [
    (999.6, "1.0 kB"), (999_999, "1.0 MB"), (999_949, "999.9 kB"), (999_999_999, "1.0 GB"),
])
def test_bytes_round_before_choosing_the_unit(value: float, text: str) -> None:
    assert human_bytes(value) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("mongodb://admin:s3cret@db.example.com/shop", "mongodb://admin:****@db.example.com/shop"),
    ("mongodb+srv://u:p%40ss@cluster0.example.net/?retryWrites=true",
     "mongodb+srv://u:****@cluster0.example.net/?retryWrites=true"),
    ("--data shop.orders=mongodb://a:b@h:27017,h2:27017/db: no such file",
     "--data shop.orders=mongodb://a:****@h:27017,h2:27017/db: no such file"),
    ("cannot read mongodb:/admin:s3cret@db/shop", "cannot read mongodb:/admin:****@db/shop"),  # a Path folds the //
    ("https://u:p@ss@host/x.log", "https://u:****@host/x.log"),
    ("mongodb://admin@db.example.com/shop", "mongodb://admin@db.example.com/shop"),
    ("/var/log/mongodb/mongod.log", "/var/log/mongodb/mongod.log"),
    ("user:pw@host", "user:****@host"),  # no scheme: still a password
    ("mongodb//admin:S3cretPW@host", "mongodb//admin:****@host"),  # a malformed scheme is masked as a good one
    ("error: 'mongodb:admin:S3cretPW@host' is bad", "error: 'mongodb:****@host' is bad"),
    ("--uri=admin:p@ss:w0rd@db1,db2/shop?x=1", "--uri=admin:****@db1,db2/shop?x=1"),
    ("mongodb://h/?tlsCertificateKeyFilePassword=S3cret&authMechanismProperties=AWS_SESSION_TOKEN:T0k,A:b",
     "mongodb://h/?tlsCertificateKeyFilePassword=****&authMechanismProperties=AWS_SESSION_TOKEN:****,A:b"),
    ("write to bob@example.com", "write to bob@example.com"),
])
def test_passwords_in_uris_are_masked(text: str, masked: str) -> None:
    assert mask_secrets(text) == masked
    assert mask_secrets(masked) == masked


def test_control_characters_are_shown_as_escapes_and_clean_text_is_left_alone() -> None:
    assert printable("a\x1b]0;t\x07b\x00c\x7fd\x9be\r") == "a\\x1b]0;t\\x07b\\x00c\\x7fd\\x9be\\x0d"
    assert printable("tab\tand\nnewline, é, 日本") == "tab\\tand\\nnewline, é, 日本"  # a name stays on its line
    assert printable("shop.c\u202eevil\u2066x\u200fy\u2028z\ufeff") == "shop.c\\u202eevil\\u2066x\\u200fy\\u2028z\\ufeff"
    clean = "find shop.orders {status: eq}"
    assert printable(clean) is clean
