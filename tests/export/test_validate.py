"""The export's own inputs: environment names conda accepts, URLs pip and uv can use."""

from __future__ import annotations

import pytest

from variant_bridge.errors import InvalidTarget
from variant_bridge.export.validate import check_find_links, check_name, check_url, safe_name


@pytest.mark.parametrize("name", ["env", "gpu-cu126", "ML_env.2", "ünïcode"])
def test_names_conda_accepts(name: str) -> None:
    assert check_name(name) == name


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "expected a non-empty environment name"),  # QA: '' silently became `env`
        ("a: b\nc", "':' is not allowed"),  # QA: written as-is
        ("line\nbreak", "'\\n' is not allowed"),
        ("ml/gpu", "'/' is not allowed"),  # conda's PREFIX_NAME_DISALLOWED_CHARS
        ("gpu#1", "'#' is not allowed"),
        ("my env", "' ' is not allowed"),
        ("tab\there", "'\\t' is not allowed"),
    ],
)
def test_names_conda_refuses(name: str, message: str) -> None:
    with pytest.raises(InvalidTarget) as info:
        check_name(name)
    assert message in str(info.value)
    assert str(info.value).startswith(f"--name {name!r}: ")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my gpu env", "my-gpu-env"),  # a prefix directory named with spaces
        ("a:b#c", "a-b-c"),
        ("gpu", "gpu"),
        (":::", "env"),  # nothing left
    ],
)
def test_safe_name(text: str, expected: str) -> None:
    assert safe_name(text) == expected
    check_name(safe_name(text))


@pytest.mark.parametrize(
    "url",
    [
        "https://wheels.example/simple",
        "http://127.0.0.1:8000/simple/",
        "http://[::1]:8000/simple",
        "file:///srv/simple",
        "https://user@host.example/simple",
    ],
)
def test_usable_urls(url: str) -> None:
    assert check_url(url, option="--index-url") == url


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://[::1", "Invalid IPv6 URL"),  # QA: "unexpected ValueError"
        ("http://", "no host"),  # QA: mangled to http:/pkg/
        ("nope", "no scheme"),
        ("ftp://host/simple", "scheme 'ftp'"),
        ("http://host:port/", "Port could not be cast"),
        ("http://host:99999/", "Port out of range"),
        ("https://x/my index", "percent-encode it"),  # pip would split the option line
        ("file:", "no path"),
    ],
)
def test_malformed_urls(url: str, problem: str) -> None:
    with pytest.raises(InvalidTarget) as info:
        check_url(url, option="--extra-index-url")
    message = str(info.value)
    assert message.startswith(
        f"--extra-index-url {url!r}: expected an http://, https:// or file:// URL"
    )
    assert problem in message


@pytest.mark.parametrize(
    ("location", "ok"),
    [
        ("./wheels", True),  # a directory: read (and checked) later
        ("/srv/my wheels", True),  # written as a file:// URL, so a space is fine
        ("https://x.example/links/", True),
        ("http://[::1", False),
        ("", False),
    ],
)
def test_find_links(location: str, ok: bool) -> None:
    if ok:
        assert check_find_links(location) == location
    else:
        with pytest.raises(InvalidTarget, match=r"^--find-links "):
            check_find_links(location)
