"""Exceptions shared by the layers, mapped to exit statuses by the CLI."""


class JostleError(Exception):
    """A failure the user should read about; exit status 1."""

    exit_status = 1


class UsageError(JostleError):
    """Bad input on the command line: the message names the value and what is allowed."""

    exit_status = 2


class Interrupted(JostleError):
    """The user pressed Ctrl-C; the conventional status of death by SIGINT."""

    exit_status = 130


def read_input(path, option: str) -> str:
    """The text of the file PATH named by OPTION, or a UsageError naming both."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise UsageError(f"{option} '{path}': cannot read it ({e.strerror})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{option} '{path}': not a text file (not UTF-8)") from None
