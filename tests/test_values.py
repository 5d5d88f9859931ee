"""``@value`` behaves as ``@dataclass(frozen=True, slots=True)`` does, method for method."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import re
import typing
from dataclasses import FrozenInstanceError, InitVar, dataclass, field
from typing import Any, ClassVar

import pytest

from variant_bridge import _values
from variant_bridge._values import value


# Module-level twins so that pickle can find them by name.
@dataclass(frozen=True, slots=True)
class Reference:
    """A record with every kind of field."""

    name: str
    count: int = 1
    tags: tuple[str, ...] = field(default=(), hash=False)
    notes: list[str] = field(default_factory=list, compare=False)
    double: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "double", self.count * 2)


def light_class() -> type[Any]:
    """A fresh @value twin of Reference (each test may compile its __init__ or not)."""

    @value
    class Light:
        """A record with every kind of field."""

        name: str
        count: int = 1
        tags: tuple[str, ...] = field(default=(), hash=False)
        notes: list[str] = field(default_factory=list, compare=False)
        double: int = field(init=False, repr=False, compare=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "double", self.count * 2)

    return Light


@pytest.fixture(params=["generic", "compiled"])
def Light(request: pytest.FixtureRequest) -> type[Any]:  # noqa: N802 (it stands for a class)
    """The class with its generic __init__, or after enough instances to compile one."""
    cls = light_class()
    if request.param == "compiled":
        for _ in range(_values._COMPILE_AFTER):
            cls("warm")
        assert cls.__init__.__code__.co_filename == "<string>"
    return cls


# A module-level twin that pickle can find by name.
Pickled = light_class()
Pickled.__qualname__ = Pickled.__name__ = "Pickled"


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("a",), {}),
    (("a", 3), {}),
    (("a", 3, ("x",), ["n"]), {}),
    ((), {"name": "b", "tags": ("y",)}),
    (("c",), {"notes": ["m"], "count": 0}),
]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_same_state_repr_equality_and_hash(
    Light: type[Any],  # noqa: N803
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    ref, light = Reference(*args, **kwargs), Light(*args, **kwargs)
    assert repr(light) == repr(ref).replace("Reference", "light_class.<locals>.Light")
    assert dataclasses.astuple(light) == dataclasses.astuple(ref)
    assert light.double == ref.double
    assert hash(light) == hash(ref)
    assert light == Light(*args, **kwargs)
    assert light != ref  # another class, as for dataclasses
    assert light != Light("other")
    assert light == dataclasses.replace(light, notes=["ignored by =="])


def test_fields_replace_and_match_args_work(Light: type[Any]) -> None:  # noqa: N803
    light = Light("a", 2)
    assert [f.name for f in dataclasses.fields(light)] == [
        f.name for f in dataclasses.fields(Reference)
    ]
    changed = dataclasses.replace(light, count=5)
    assert (changed.count, changed.double) == (5, 10)  # __post_init__ ran again
    assert Light.__match_args__ == Reference.__match_args__
    assert Light.__slots__ == Reference.__slots__
    match light:
        case Light("a", 2):
            pass
        case _:
            pytest.fail("positional match failed")


@pytest.mark.parametrize("name", ["name", "double", "other"])
def test_assignment_and_deletion_are_refused_like_a_frozen_dataclass(
    Light: type[Any],  # noqa: N803
    name: str,
) -> None:
    # (A slotted frozen dataclass fails with a TypeError for a name that is no field: its
    # __setattr__ refers to the class from before slots were added. Ours refuses it cleanly.)
    for obj in (Reference("a"), Light("a")) if name != "other" else (Light("a"),):
        with pytest.raises(FrozenInstanceError, match=f"cannot assign to field '{name}'"):
            setattr(obj, name, 1)
        with pytest.raises(FrozenInstanceError, match=f"cannot delete field '{name}'"):
            delattr(obj, name)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), (("a", 1, (), [], 5), {}), (("a",), {"name": "b"}), (("a",), {"nope": 1})],
)
def test_bad_arguments_fail_with_pythons_message(
    Light: type[Any],  # noqa: N803
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    with pytest.raises(TypeError) as expected:
        Reference(*args, **kwargs)
    with pytest.raises(TypeError) as got:
        Light(*args, **kwargs)
    assert str(got.value) == str(expected.value).replace("Reference", "light_class.<locals>.Light")


def test_copy_and_pickle_round_trip() -> None:
    light = Pickled("a", 3, ("t",), ["n"])
    for twin in (copy.copy(light), copy.deepcopy(light), pickle.loads(pickle.dumps(light))):
        assert twin == light
        assert (twin.notes, twin.double) == (["n"], 6)


def test_methods_the_class_defines_are_kept() -> None:
    @value
    class Custom:  # noqa: PLW1641 (the point: @value adds __hash__)
        x: int

        def __repr__(self) -> str:
            return "custom"

        def __eq__(self, other: object) -> bool:
            return True

    assert repr(Custom(1)) == "custom"
    assert Custom(1) == Custom(2)
    assert hash(Custom(1)) == hash(Custom(1))  # Python's implicit __hash__ = None is replaced


def test_a_class_without_docstring_gets_the_signature_dataclasses_writes() -> None:
    @dataclass(frozen=True, slots=True)
    class Plain:
        a: int
        b: str = "x"
        c: list[int] = field(default_factory=list)

    @value
    class Light:
        a: int
        b: str = "x"
        c: list[int] = field(default_factory=list)

    assert Light.__doc__ == Plain.__doc__.replace("Plain", "Light")  # type: ignore[union-attr]


def test_class_variables_stay_on_the_class_and_are_no_fields() -> None:
    @dataclass(frozen=True, slots=True)
    class Plain:
        a: int
        KIND: ClassVar[str] = "plain"
        OTHER: typing.ClassVar[int] = 2

    @value
    class Light:
        a: int
        KIND: ClassVar[str] = "plain"
        OTHER: typing.ClassVar[int] = 2

    assert [f.name for f in dataclasses.fields(Light)] == ["a"]
    assert (Light.KIND, Light.OTHER, Light.__slots__) == ("plain", 2, ("a",))
    assert Light.__slots__ == Plain.__slots__
    assert dataclasses.replace(Light(1), a=2) == Light(2)
    assert dataclasses.is_dataclass(Light)
    assert dataclasses.is_dataclass(Light(1))
    assert dataclasses.asdict(Light(3)) == {"a": 3}


def test_fields_of_base_classes_come_first_as_in_dataclasses() -> None:
    @dataclass(frozen=True, slots=True)
    class PlainBase:
        a: int
        b: str = "x"

    @dataclass(frozen=True, slots=True)
    class Plain(PlainBase):
        c: int = 0
        b: str = "y"

    @value
    class Base:
        a: int
        b: str = "x"

    @value
    class Light(Base):
        c: int = 0
        b: str = "y"

    assert [f.name for f in dataclasses.fields(Light)] == [
        f.name for f in dataclasses.fields(Plain)
    ]
    assert Light.__slots__ == Plain.__slots__ == ("c",)  # the base's slots are not repeated
    assert Light.__match_args__ == Plain.__match_args__
    light, plain = Light(1), Plain(1)
    assert (light.a, light.b, light.c) == (plain.a, plain.b, plain.c) == (1, "y", 0)
    assert repr(light).endswith("Light(a=1, b='y', c=0)")
    assert isinstance(light, Base)
    assert light != Base(1, "y")


class _MutableDefault:
    items: list[int] = []  # noqa: RUF012 (the point)


class _UnannotatedField:
    x = field(default=1)


class _InitVarField:
    x: dataclasses.InitVar[int] = 1  # text, read as dataclasses reads it: module.name


class _BareInitVar:
    x: InitVar[int] = 1


@pytest.mark.parametrize(
    ("cls", "error"),
    [
        (_MutableDefault, "mutable default <class 'list'> for field items is not allowed"),
        (_UnannotatedField, "'x' is a field but has no type annotation"),
        (_InitVarField, "does not support InitVar"),
        (_BareInitVar, "does not support InitVar"),
    ],
)
def test_what_dataclasses_refuses_is_refused(cls: type[Any], error: str) -> None:
    with pytest.raises((TypeError, ValueError), match=re.escape(error)):
        value(cls)
