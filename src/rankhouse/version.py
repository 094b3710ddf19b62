"""The package version (pyproject.toml reads it here; nothing looks up metadata at start-up),
and the release that brought each schema version of the warehouse."""

__version__ = "0.15.0"

#: Each release, oldest first, with the newest schema version (migration number) it ships.
#: Releases before 0.15.0 all called themselves 0.1.0: they brought schemas 1 to 14.
RELEASES: tuple[tuple[str, int], ...] = (
    ("0.1.0", 14),
    ("0.15.0", 15),
)


def release_of_schema(version: int) -> str | None:
    """The release that brought schema ``version`` (the oldest rankhouse that opens a warehouse
    at it); None for a schema newer than this release knows."""
    for release, newest in RELEASES:
        if version <= newest:
            return release
    return None
