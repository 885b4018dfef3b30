"""Third-party modules imported on their first use. `jostle --help`, a dry run, `status` or a
`submit` need none of pandas, numpy and matplotlib, whose import is most of a command's start-up
(about a second of CPU, paid by every `jostle` a job script or a test starts)."""

import importlib
import types


class _Deferred(types.ModuleType):
    """Stands for module NAME until an attribute is read: then imports it (after BEFORE) and
    takes its namespace, so later reads are plain attribute reads."""

    def __init__(self, name: str, before=None):
        super().__init__(name)
        self.__dict__["_deferred"] = (name, before)

    def __getattr__(self, attr):
        name, before = self.__dict__["_deferred"]
        if before:
            before()
        real = importlib.import_module(name)
        self.__dict__.update(real.__dict__)
        return getattr(real, attr)


def module(name: str, before=None) -> types.ModuleType:
    return _Deferred(name, before)
