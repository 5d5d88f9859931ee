"""``@value``: a frozen, slotted dataclass that costs ~0.04 ms to define instead of ~0.5 ms.

``@dataclass(frozen=True, slots=True)`` compiles six methods per class with ``exec()``
(``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``). A cold
``detect --json`` defines about thirty value classes and a cold ``install`` about 120, so that
compiling was a fifth of their start-up. Here the methods are closures over the field names, built
without compiling anything, and the fields are collected here as dataclasses collects them (its
own pass, ~0.05 ms a class, was most of what remained): ``dataclasses.fields()``, ``replace()``,
``is_dataclass()``, ``asdict()`` and ``__match_args__`` work as for a dataclass. The methods
behave like the generated ones: the same constructor arguments and defaults
(``field(default=..., default_factory=..., init=False)``, then ``__post_init__``), the same
``repr`` text, equality and hash over the compared fields, :class:`~dataclasses.FrozenInstanceError`
on assignment, and copy/pickle support. (``InitVar`` and ``KW_ONLY`` are refused: no class here
needs them.)

A class's first instances are built by a generic ``__init__`` (about 0.2 us more per object);
its 50th compiles the ``__init__`` dataclasses would have written, so a class built in a hot loop
builds as fast as a dataclass, and one built a few times never compiles anything. Equality and
hash stay generic (``operator.attrgetter`` tuples, within ~0.1 us of the generated ones); a
class whose comparisons are the hot path writes them out itself (``properties``: ordered too), and
a method the class defines is kept.
``bench/bench_translate.py``, ``bench/bench_rank.py`` and ``bench/bench_select.py`` measure the
paths that build these. (Until it compiles, ``inspect.signature`` of the class reads
``(*args, **kwargs)``; a class without a docstring gets the signature text dataclasses writes.)
"""

from __future__ import annotations

import abc
import dataclasses
import sys
from collections.abc import Callable
from dataclasses import MISSING, FrozenInstanceError
from operator import attrgetter
from types import MemberDescriptorType, ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: object) -> Callable[[Any], Any]:
        return lambda decorator: decorator


__all__ = ["value"]

T = TypeVar("T")
_Fields = tuple[dataclasses.Field[Any], ...]
_set = object.__setattr__


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def value(cls: type[T]) -> type[T]:
    """Make *cls* a frozen, slotted dataclass (see the module docstring)."""
    fields = _collect_fields(cls)
    own = cls.__dict__
    namespace = dict(own)
    for name in fields:  # their defaults live in the fields; the slots replace them
        namespace.pop(name, None)
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    inherited = {slot for base in cls.__mro__[1:-1] for slot in _slots_of(base)}
    namespace["__slots__"] = tuple(name for name in fields if name not in inherited)
    namespace["__dataclass_fields__"] = fields
    namespace["__dataclass_params__"] = _PARAMS
    listed = [f for f in fields.values() if f.init]
    namespace.setdefault("__match_args__", tuple(f.name for f in listed))
    if own.get("__doc__") is None:  # the text dataclasses writes there
        namespace["__doc__"] = _signature_text(cls.__name__, listed)
    made: type[T] = type(cls)(cls.__name__, cls.__bases__, namespace)  # type: ignore[misc]
    made.__qualname__ = cls.__qualname__
    if hasattr(made, "__abstractmethods__"):
        abc.update_abstractmethods(made)
    values = tuple(fields.values())
    methods = {
        "__init__": _init(made, values),
        "__repr__": _repr([f.name for f in values if f.repr]),
        "__eq__": _eq(_getter([f.name for f in values if f.compare])),
        "__hash__": _hash(_getter([f.name for f in values if _hashed(f)])),
        **_frozen(made, values),
    }
    # As dataclasses does: a method the class defines stays, except the __hash__ = None that
    # Python adds to a class defining __eq__.
    implicit_hash = own.get("__hash__") is None and "__eq__" in own
    for name, method in methods.items():
        if name in own and not (name == "__hash__" and implicit_hash):
            continue
        method.__name__ = name
        method.__qualname__ = f"{made.__qualname__}.{name}"
        setattr(made, name, method)
    return made


# What dataclasses records for the classes here (its flags, in this Python's shape) and how it
# marks a real field (not a ClassVar or an InitVar), which ``fields()`` and ``replace()`` look
# for: both read from one class it processed (with these flags it compiles nothing).
_TEMPLATE: Any = dataclasses.dataclass(slots=True, init=False, repr=False, eq=False)(
    type("_Template", (), {"__doc__": "-", "__annotations__": {"one": "int"}})
)
_PARAMS = _TEMPLATE.__dataclass_params__
_FIELD_KIND = _TEMPLATE.__dataclass_fields__["one"]._field_type


def _collect_fields(cls: type) -> dict[str, dataclasses.Field[Any]]:
    """The dataclass fields of *cls*, as dataclasses collects them: the base classes' first (the
    nearest base's last), then each annotation of the class itself that is not a ``ClassVar``,
    with its default (``x: int = 0``) or the ``field()`` it names."""
    fields: dict[str, dataclasses.Field[Any]] = {}
    for base in cls.__mro__[-1:0:-1]:
        inherited = base.__dict__.get("__dataclass_fields__")
        if inherited is not None:
            fields.update((f.name, f) for f in inherited.values())
    annotations = _own_annotations(cls)
    scope = vars(sys.modules[cls.__module__]) if cls.__module__ in sys.modules else {}
    for name, annotation in annotations.items():
        kind = _kind(annotation, scope)
        if kind is ClassVar:
            continue
        if kind is dataclasses.InitVar or kind is dataclasses.KW_ONLY:
            raise TypeError(f"@value does not support InitVar or KW_ONLY ({cls.__name__}.{name})")
        default = getattr(cls, name, MISSING)
        if isinstance(default, dataclasses.Field):
            made = default
        else:
            if isinstance(default, MemberDescriptorType):  # a slot of a base, not a default
                default = MISSING
            made = dataclasses.field(default=default)  # type: ignore[arg-type]
        made.name = name
        made.type = annotation
        made._field_type = _FIELD_KIND  # type: ignore[attr-defined]
        if made.kw_only is MISSING:
            made.kw_only = False
        if made.default is not MISSING and type(made.default).__hash__ is None:
            raise ValueError(
                f"mutable default {type(made.default)} for field {name} is not allowed: "
                "use default_factory"
            )
        fields[name] = made
    for name, attribute in cls.__dict__.items():
        if isinstance(attribute, dataclasses.Field) and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    return fields


def _own_annotations(cls: type) -> dict[str, Any]:
    # The class's own, as dataclasses reads them up to 3.13 (inspect is not imported here).
    found = cls.__dict__.get("__annotations__")  # noqa: RUF063
    if found is None and sys.version_info >= (3, 14):  # annotations evaluated lazily (PEP 649)
        import annotationlib  # type: ignore[import-not-found, unused-ignore]

        found = annotationlib.get_annotations(cls, format=annotationlib.Format.FORWARDREF)
    return dict(found or {})


def _kind(annotation: object, scope: dict[str, Any]) -> object:
    """What an annotation's head is (``ClassVar``, ``InitVar``, ...), as dataclasses reads text
    annotations (``from __future__ import annotations``): a name or ``module.name`` before any
    ``[``, looked up in the class's module."""
    if not isinstance(annotation, str):
        if isinstance(annotation, dataclasses.InitVar):
            return dataclasses.InitVar
        return getattr(annotation, "__origin__", annotation)
    head = annotation.partition("[")[0].strip()
    module, _, name = head.rpartition(".")
    if not module:
        return scope.get(name)
    found = scope.get(module)
    return getattr(found, name, None) if isinstance(found, ModuleType) else None


def _slots_of(cls: type) -> tuple[str, ...]:
    slots = cls.__dict__.get("__slots__", ())
    return (slots,) if isinstance(slots, str) else tuple(slots)


def _signature_text(name: str, params: list[dataclasses.Field[Any]]) -> str:
    """``Name(a: 'int', b: 'str' = 'x', c: 'list' = <factory>)``, as ``inspect`` words it."""
    parts = []
    for f in params:
        text = f"{f.name}: {f.type!r}"  # annotations are text (PEP 563) in this package
        if f.default is not MISSING:
            text += f" = {f.default!r}"
        elif f.default_factory is not MISSING:
            text += " = <factory>"
        parts.append(text)
    return f"{name}({', '.join(parts)})"


def _hashed(f: dataclasses.Field[Any]) -> bool:
    return bool(f.compare if f.hash is None else f.hash)


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of these attributes (a tuple even for one, as dataclasses compares)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = names[0]
        return lambda self: (getattr(self, one),)
    return lambda self: ()


def _repr(shown: list[str]) -> Callable[[Any], str]:
    def repr_(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({inner})"

    return repr_


def _eq(compared: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, object], object]:
    def eq(self: Any, other: object) -> object:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    return eq


def _hash(hashed: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def hash_(self: Any) -> int:
        return hash(hashed(self))

    return hash_


def _frozen(cls: type[Any], fields: _Fields) -> dict[str, Callable[..., Any]]:
    """Assignment and deletion refused; copy and pickle set the slots directly."""
    names = frozenset(f.name for f in fields)

    def setattr_(self: Any, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def delattr_(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    def getstate(self: Any) -> list[Any]:
        return [getattr(self, f.name) for f in fields]

    def setstate(self: Any, state: list[Any]) -> None:
        for f, item in zip(fields, state, strict=False):
            _set(self, f.name, item)

    return {
        "__setattr__": setattr_,
        "__delattr__": delattr_,
        "__getstate__": getstate,
        "__setstate__": setstate,
    }


_Param = tuple[str, Any, Any]  # name, default, default_factory (MISSING when none)
_Bind = Callable[[Any, tuple[Any, ...], dict[str, Any]], None]


_COMPILE_AFTER = 50
"""Instances after which a class's ``__init__`` is compiled as dataclasses would write it: a class
built that often is on a hot path (ranking, wheel selection), one built a few times never pays."""


def _init(cls: type, fields: _Fields) -> Callable[..., None]:
    # Each slot's own setter: faster than object.__setattr__ and past the frozen __setattr__.
    slot = {f.name: getattr(cls, f.name).__set__ for f in fields}
    params: list[_Param] = [(f.name, f.default, f.default_factory) for f in fields if f.init]
    setters = tuple(slot[name] for name, _, _ in params)
    count = len(setters)
    # init=False fields with a default are set before __post_init__, as dataclasses does.
    derived = [
        (slot[f.name], f.default, f.default_factory)
        for f in fields
        if not f.init and (f.default is not MISSING or f.default_factory is not MISSING)
    ]
    post_init = hasattr(cls, "__post_init__")
    bind = _binder(cls, params, slot)
    calls = 0

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == _COMPILE_AFTER:  # from now on, the class builds its instances faster
            type.__setattr__(cls, "__init__", _compiled(cls, params, derived, slot))
        if kwargs or len(args) != count:
            bind(self, args, kwargs)
        else:  # every argument positional: the common case, kept short
            for setter, arg in zip(setters, args, strict=True):
                setter(self, arg)
        for setter, default, factory in derived:
            setter(self, default if factory is MISSING else factory())
        if post_init:
            self.__post_init__()

    return init


def _compiled(
    cls: type,
    params: list[_Param],
    derived: list[tuple[Callable[[Any, Any], None], Any, Any]],
    slot: dict[str, Callable[[Any, Any], None]],
) -> Callable[..., None]:
    """The ``__init__`` dataclasses generates (same signature, defaults, messages), compiled."""
    scope: dict[str, Any] = {"__value_missing__": MISSING}
    args: list[str] = []
    body: list[str] = []
    for i, (name, default, factory) in enumerate(params):
        scope[f"__value_set_{i}__"] = slot[name]
        value = name
        if factory is not MISSING:
            scope[f"__value_factory_{i}__"] = factory
            args.append(f"{name}=__value_missing__")
            value = f"__value_factory_{i}__() if {name} is __value_missing__ else {name}"
        elif default is not MISSING:
            scope[f"__value_default_{i}__"] = default
            args.append(f"{name}=__value_default_{i}__")
        else:
            args.append(name)
        body.append(f"__value_set_{i}__(__value_self__, {value})")
    for j, (setter, default, factory) in enumerate(derived):
        scope[f"__value_derived_{j}__"] = setter
        scope[f"__value_derived_value_{j}__"] = default if factory is MISSING else factory
        call = "()" if factory is not MISSING else ""
        body.append(f"__value_derived_{j}__(__value_self__, __value_derived_value_{j}__{call})")
    if hasattr(cls, "__post_init__"):
        body.append("__value_self__.__post_init__()")
    source = f"def __init__(__value_self__, {', '.join(args)}):\n"
    source += "".join(f"    {line}\n" for line in body or ["pass"])
    exec(source, scope)  # the text is built above from field names only
    function: Callable[..., None] = scope["__init__"]
    function.__qualname__ = f"{cls.__qualname__}.__init__"
    return function


def _binder(cls: type, params: list[_Param], slot: dict[str, Callable[[Any, Any], None]]) -> _Bind:
    """Arguments to fields, with the messages Python gives for a generated ``__init__``."""
    where = f"{cls.__qualname__}.__init__()"
    count = len(params)
    least = sum(1 for _, default, factory in params if default is MISSING and factory is MISSING)
    takes = f"{count + 1}" if least == count else f"from {least + 1} to {count + 1}"

    def bind(self: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if len(args) > count:
            raise TypeError(
                f"{where} takes {takes} positional arguments but {len(args) + 1} were given"
            )
        for (name, _, _), arg in zip(params, args, strict=False):
            if name in kwargs:
                raise TypeError(f"{where} got multiple values for argument {name!r}")
            slot[name](self, arg)
        for name, default, factory in params[len(args) :]:
            if name in kwargs:
                slot[name](self, kwargs.pop(name))
            elif factory is not MISSING:
                slot[name](self, factory())
            elif default is not MISSING:
                slot[name](self, default)
            else:
                raise TypeError(f"{where} missing 1 required positional argument: {name!r}")
        if kwargs:
            raise TypeError(f"{where} got an unexpected keyword argument {next(iter(kwargs))!r}")

    return bind
