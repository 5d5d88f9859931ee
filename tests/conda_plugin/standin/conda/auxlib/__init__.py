"""conda's ``NULL``: a value that is absent (a virtual package not present here)."""


class _Null:
    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NULL"


NULL = _Null()
