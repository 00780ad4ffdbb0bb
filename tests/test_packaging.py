"""The test extra installs in one pass: pip never backtracks over the S3 stack (s3fs, fsspec, aiobotocore, botocore,
boto3, moto), because those are pinned as one set whose members' own requirements agree with each other."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

from tests.conftest import REPO_ROOT

S3_STACK = ("s3fs", "fsspec", "aiobotocore", "botocore", "boto3", "moto")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def the_test_extra() -> dict[str, Requirement]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [Requirement(text) for text in project["optional-dependencies"]["test"]]
    return {_canonical(item.name): item for item in requirements}


def _pinned_version(requirement: Requirement) -> str:
    pins = [spec.version for spec in requirement.specifier if spec.operator == "=="]
    assert len(pins) == 1, f"{requirement} is not pinned to one version"
    return pins[0]


def test_the_s3_stack_is_pinned_in_the_test_extra() -> None:
    extra = the_test_extra()
    for name in S3_STACK:
        assert name in extra, f"{name} is not in the test extra"
        _pinned_version(extra[name])


def test_the_pinned_s3_stack_agrees_with_itself() -> None:
    """Each pinned package's own requirements (read from its installed metadata) accept the other pins: what pip
    checks, so that it finds the set without trying other releases."""
    extra = the_test_extra()
    pins = {name: _pinned_version(extra[name]) for name in S3_STACK}
    environment = {**default_environment(), "extra": ""}
    for name, version in pins.items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pytest.skip(f"{name} is not installed")
        if installed != version:
            pytest.skip(f"{name} {installed} is installed, not the pinned {version}: install the test extra")
        for text in importlib.metadata.requires(name) or []:
            requirement = Requirement(text)
            other = _canonical(requirement.name)
            if other in pins and (requirement.marker is None or requirement.marker.evaluate(environment)):
                assert requirement.specifier.contains(pins[other], prereleases=True), (
                    f"{name}=={version} requires {requirement}, but the test extra pins {other}=={pins[other]}")


def test_the_test_extra_runs_the_suite_in_parallel() -> None:
    assert "pytest-xdist" in the_test_extra()
