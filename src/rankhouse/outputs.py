"""The files a verb writes (a report, a gate's JSON, JUnit or Markdown): checked before any work,
written whole.

A command that is asked to write a file it cannot write must fail before it has changed the
warehouse, so :func:`check_output_path` is called first, before anything is ingested,
evaluated or stored: a folder, a path in a missing folder, a folder that takes no new file
(no right to write in it, a read-only or virtual file system such as ``/proc``) are each named
in one :class:`~rankhouse.errors.OutputError`. :func:`write_text` then writes the text to a
temporary file beside the target and renames it over the target, so that a write that fails
late (a full disk) leaves the old file, or none, and never half a file.

A path that exists and is not a regular file (``/dev/null``, ``/dev/stdout``, a named pipe)
is written through, as a shell's ``>`` writes it, and never renamed over: as root a rename
would replace the device itself for the whole machine. A socket is refused.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import OutputError
from .lazy import tempfile


def check_output_path(path: str | os.PathLike[str], what: str, example: str) -> Path:
    """``path`` as a :class:`~pathlib.Path`, checked to be a file that can be written.

    Args:
        path: the file to write (it may exist: it is replaced; a device or named pipe is
            written through).
        what: what the file is, for the message (``"the report"``).
        example: a file name to suggest in a folder given instead of a file (``"report.html"``).

    Raises:
        OutputError: ``path`` is a folder or a socket, its folder does not exist, is not a
            folder or takes no new file, or it cannot be written (no permission, a loop of
            symbolic links, a name too long).
    """
    target = Path(path)
    shown = str(path)
    try:
        if target.is_dir():
            raise OutputError(
                f"{what} {shown!r} is a folder, not a file",
                hint=f"name a file in it, e.g. {target / example}",
            )
        special = _special_kind(target)
        if special == "a socket":
            raise OutputError(f"cannot write {what} {shown!r}: it is a socket, not a file")
        if special is not None:  # written through, never replaced (see the module)
            if not os.access(target, os.W_OK):
                raise OutputError(f"cannot write {what} {shown!r}: permission denied")
            return target
        folder = target.parent
        if not folder.exists():
            raise OutputError(
                f"cannot write {what} {shown!r}: the folder {str(folder)!r} does not exist",
                hint=f"create it first (mkdir -p {folder})",
            )
        if not folder.is_dir():
            kind = _special_kind(folder) or "a file"
            raise OutputError(
                f"cannot write {what} {shown!r}: {str(folder)!r} is {kind}, not a folder"
            )
        writable = os.access(target, os.W_OK) if target.exists() else os.access(folder, os.W_OK)
        if not writable:
            raise OutputError(f"cannot write {what} {shown!r}: permission denied")
        real = Path(os.path.realpath(target))  # a loop of symbolic links fails here (3.13)
        target.resolve(strict=False)  # ... and here (3.11), not after the work
        _probe(real.parent, what, shown)
    except (OSError, RuntimeError) as exc:  # RuntimeError: pathlib's symlink loop (3.11)
        raise OutputError(f"cannot write {what} {shown!r}: {_reason(exc)}") from None
    return target


def _special_kind(path: Path) -> str | None:
    """What ``path`` is when it exists and is neither a regular file nor a folder (following
    symbolic links): ``"a device"``, ``"a named pipe"``, ``"a socket"``; else None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None


def _probe(folder: Path, what: str, shown: str) -> None:
    """Create and remove a temporary file in ``folder``, as :func:`write_text` will: a folder
    that takes no new file (``/proc``, a read-only file system) fails here, before the work."""
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".rankhouse-probe.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(
            f"cannot write {what} {shown!r}: the folder {str(folder)!r} takes no new file "
            f"({_reason(exc)})"
        ) from None
    os.close(fd)
    Path(name).unlink(missing_ok=True)


def write_text(
    path: str | os.PathLike[str], text: str, what: str, *, kept: str | None = None
) -> Path:
    """Write ``text`` (UTF-8) to ``path`` whole: into a temporary file in the same folder,
    then renamed over ``path`` (the file a symbolic link points to, when ``path`` is one).
    A new file gets the permissions the umask gives; a replaced one keeps its own. A device
    or named pipe (``/dev/null``) is written through, never replaced.

    Args:
        path: the file.
        text: its text.
        what: what the file is, for the message (``"the report"``).
        kept: what the warehouse keeps although the file could not be written, said in
            the error (``"the evaluations it computed stay stored"``).

    Raises:
        OutputError: the text could not be written (the temporary file is removed).
    """
    target = Path(path)
    temporary = None
    try:
        real = Path(os.path.realpath(target))
        if _special_kind(real) is not None:
            with open(real, "w", encoding="utf-8", newline="") as out:
                out.write(text)
            return target
        fd, temporary = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.chmod(temporary, _mode(real))
        os.replace(temporary, real)
    except (OSError, RuntimeError) as exc:  # RuntimeError: pathlib's symlink loop (3.11)
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        raise OutputError(f"cannot write {what} {str(path)!r}: {_reason(exc)}", hint=kept) from None
    return target


def _mode(path: Path) -> int:
    """The permissions a written file gets: the replaced file's, else the umask's."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[0].lower() + exc.strerror[1:]
    if isinstance(exc, RuntimeError) and "loop" in str(exc).lower():
        return "a loop of symbolic links"
    return str(exc)


def flush_to_disk(path: Path) -> None:
    """``fsync`` a file, or a folder (so that a rename in it survives a power cut): what a file
    written whole and renamed into place (an archive, a compacted warehouse) needs before and
    after its rename."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
