"""The exceptions veil raises for problems the user can fix.

Every message is one sentence that names the thing to fix; the CLI prints it and exits 2.
"""


def lower_first(text: str) -> str:
    """A sentence made ready to follow another in one message (``where: <text>``): its first
    letter in lower case, unless the first word is a name written in capitals (``ARX``, ``CSV``).
    """
    if text[:1].isupper() and not text[1:2].isupper():
        return text[0].lower() + text[1:]
    return text


class VeilError(Exception):
    """Base class of every error a user can cause and fix."""


class DataError(VeilError):
    """A table cannot be read or used: missing file, ragged CSV, empty table."""


class ColumnError(VeilError):
    """A column is unknown, or its roles contradict each other."""


class HierarchyError(VeilError):
    """A generalization hierarchy is malformed or does not cover the data."""


class ParameterError(VeilError):
    """A parameter is out of its valid range (k < 1, c <= 0, ...)."""


class ConfigError(VeilError):
    """A configuration file is malformed or asks for something invalid; the message names the
    file, the line and the key to fix."""


class InfeasibleError(VeilError):
    """No release satisfies the privacy models within the given limits; the message names the
    setting to relax."""
