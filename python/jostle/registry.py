"""Named entries of one kind (launchers, exporters, the checks of `jostle check`), as ReFrame's reframe/core/backends.py keeps
its launchers: one way to register, a name registered twice refused (a second definition would
silently take the first one's place), and an entry that could not be loaded kept with its error
until someone asks for it by name, so that one broken entry never stops the others."""

from .errors import JostleError, UsageError


class Registry:
    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict = {}
        self._failed: dict = {}   # name -> why it could not be loaded

    def add(self, name: str, entry=None, error: str = ""):
        """ENTRY under NAME, or NAME's load ERROR (told when NAME is asked for)."""
        if not name or name in self._entries or name in self._failed:
            raise JostleError(f"{self.kind} {name!r} registered twice" if name
                              else f"a {self.kind} needs a name")
        if error:
            self._failed[name] = error
        else:
            self._entries[name] = entry
        return entry

    def register(self, name: str):
        """Decorator: the class or function is known as NAME."""
        return lambda entry: self.add(name, entry)

    def __getitem__(self, name: str):
        if name in self._failed:
            raise JostleError(f"{self.kind} '{name}' could not be loaded: {self._failed[name]}")
        if name not in self._entries:
            raise UsageError(f"unknown {self.kind} '{name}': expected one of "
                             + ", ".join(self.names()))
        return self._entries[name]

    def __contains__(self, name) -> bool:
        return name in self._entries

    def __iter__(self):
        """The names, as names() (a registry reads as the tuple of its names)."""
        return iter(self.names())

    def names(self) -> list:
        """The names that can be asked for, those that failed to load included."""
        return [*self._entries, *self._failed]

    def items(self):
        return self._entries.items()
