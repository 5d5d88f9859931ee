"""The part of conda's ``PackageRecord`` virtual packages use."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PackageRecord:
    name: str
    version: str
    build: str = "0"

    @classmethod
    def virtual_package(cls, name: str, version: str | None, build: str | None) -> PackageRecord:
        # None means 0, as conda writes it.
        return cls(name, "0" if version is None else str(version), "0" if build is None else build)
