"""The project's own errors: what a user did or met, never a bug.

The command line (:func:`sltcheck.cli.main`) prints a :class:`SltcheckError`
as one line (``sltcheck: error: ...``) and exits 2; any other exception is a
bug and keeps its traceback. Raise these where the fix is the user's: a bad
option, a missing or corrupted file, a run directory that holds another
configuration, an output that cannot be written.
"""

from __future__ import annotations


class SltcheckError(Exception):
    """An error the user can fix; its message says what, which value, and what is allowed
    or how to recover."""


class UsageError(SltcheckError, ValueError):
    """A bad argument or option (a ``ValueError`` too, as the project's standard asks)."""


class StoredResultError(SltcheckError):
    """A results file or run directory that is missing, corrupted, of another schema
    version or of another configuration."""


class RunInUseError(SltcheckError):
    """Another process holds the run directory's lock."""
