"""The parameter types of conda's settings, as far as plugin settings use them."""

from __future__ import annotations

from typing import Any


class PrimitiveParameter:
    def __init__(self, default: Any, element_type: type | tuple[type, ...] | None = None) -> None:
        self.default = default
        self.element_type = element_type if element_type is not None else type(default)

    def parse(self, text: str) -> Any:
        if self.element_type is bool:
            return text.strip().lower() in ("1", "true", "yes", "on")
        return text


class SequenceParameter:
    def __init__(self, element_type: PrimitiveParameter, default: tuple[Any, ...] = ()) -> None:
        self.element_type = element_type
        self.default = default

    def parse(self, text: str) -> tuple[Any, ...]:
        return tuple(part for part in text.split(",") if part)
