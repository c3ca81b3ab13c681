"""The tag registry: read tag folders (``targets/`` and the user's), look tags up by name.

A tag is a YAML, TOML or JSON file whose path below its folder is its name
(``targets/arm/cortex-a72.yaml`` is ``arm/cortex-a72``); names match case-insensitively and keep
their registered spelling. This is the only module that reads tag folders. The shipped folder is
read on first use; resolving a tag's references and overrides is `hetsim.target.resolve`, and
checking a new tag before it is registered is `hetsim.target.catalog`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hetsim.errors import Problem, TargetError
from hetsim.located import locate
from hetsim.located.paths import name_problem
from hetsim.target.sources import SUFFIXES, load_file

__all__ = [
    "TAGS",
    "TAG_PATTERN",
    "Tag",
    "TagRegistry",
    "folder_path",
    "read_tag_dir",
    "shipped_tag_dir",
    "split_description",
    "valid_tag_name",
]

TAG_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*"


@dataclass(frozen=True, slots=True)
class Tag:
    """A named config: its data (without ``description``), a one-line description, its source.

    `problems` holds what went wrong reading it; a tag with problems raises them when used.
    """

    name: str
    data: Any
    description: str = ""
    source: str = "<python>"
    problems: tuple[Problem, ...] = ()

    def __repr__(self) -> str:
        return f"<Tag {self.name} from {self.source}>"


def shipped_tag_dir() -> Path | None:
    """The shipped tag folder: inside the installed package first, then the source checkout."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "targets", package.parent / "targets"):
        if candidate.is_dir():
            return candidate
    return None


def _read_tag(name: str, path: Path) -> Tag:
    """The tag file `path` holds; what is wrong with it is led by the file (and line)."""
    try:
        data = load_file(path, "a tag file")
    except TargetError as err:
        return Tag(name, None, source=str(path), problems=err.problems)
    if not isinstance(data, dict):
        expected = "expected a mapping (a tag file holds one target or config)"
        got = "an empty file" if data is None else type(data).__name__  # not 'NoneType'
        problem = locate([Problem("", expected, got)], path)[0]  # at the line its root starts
        return Tag(name, None, source=str(path), problems=(problem,))
    try:
        data, description = split_description(data, path)
    except TargetError as err:
        return Tag(name, None, source=str(path), problems=err.problems)
    return Tag(name, data, description, str(path))


def split_description(
    data: Mapping[str, Any], path: Path | None = None
) -> tuple[dict[str, Any], str]:
    """The target or config a file (`path`) or a mapping holds, without its ``description``, and
    that description on one line ("" when it has none): a tag's, or a target's that says what it
    is.

    Raises
    ------
    TargetError
        A description that is not a string, led by the file and line when read from one.
    """
    data = dict(data)
    description = data.pop("description", "")
    if not isinstance(description, str):
        problem = Problem("description", "expected a string", repr(description))
        raise TargetError([problem] if path is None else locate([problem], path))
    return data, " ".join(description.split())


MAX_TAG_FOLDER_ENTRIES = 10_000
"""The most files and folders a tag folder may hold: ``--tags /`` (or a home folder) walked and
parsed every YAML file below it, for minutes; the shipped folder holds under a hundred."""


def folder_path(folder: object) -> Path:
    """`folder` as a `Path`, refused unless it is a str or an `os.PathLike` (bytes, None).

    >>> folder_path(b"tags")
    Traceback (most recent call last):
    ...
    hetsim.errors.TargetError: b'tags': expected a folder path (a str or a Path), got a bytes
    """
    if not isinstance(folder, str | os.PathLike):
        got = f"a {type(folder).__name__}"
        raise TargetError([Problem(repr(folder), "expected a folder path (a str or a Path)", got)])
    return Path(folder)


def read_tag_dir(folder: str | Path) -> list[Tag]:
    """Every tag in `folder`, named by its path below it; bad files come back with problems.

    Raises
    ------
    TargetError
        When `folder` is not a directory, or holds more than `MAX_TAG_FOLDER_ENTRIES` files
        and folders.
    """
    folder = folder_path(folder)
    bad_name = name_problem(folder)
    try:
        found = bad_name or (None if folder.is_dir() else "a file" if folder.exists() else "none")
    except OSError as err:  # a name too long to look up
        found = err.strerror or str(err)
    if found is not None:
        raise TargetError([Problem(repr(str(folder)), "expected a folder of tag files", found)])
    entries: list[Path] = []
    for entry in folder.rglob("*"):  # lazily: a folder too big to be one is refused early
        entries.append(entry)
        if len(entries) > MAX_TAG_FOLDER_ENTRIES:
            got = f"more than {MAX_TAG_FOLDER_ENTRIES:,} files and folders under it"
            raise TargetError([Problem(str(folder), "expected a folder of tag files", got)])
    tags: list[Tag] = []
    for path in sorted(entries):
        if path.suffix.lower() in SUFFIXES and path.is_file():
            name = path.relative_to(folder).with_suffix("").as_posix()
            tags.append(_read_tag(name, path))
    return tags


class TagRegistry:
    """Tags by name, from the shipped folder (read on first use) and from registered ones.

    A registry is changed only through `commit` and `remove_folder`, which `catalog` calls after
    checking the new tags against a staged copy (`staged`), so a bad tag never lands half-way.
    """

    def __init__(self, shipped: Path | None = None) -> None:
        self._shipped = shipped
        self._loaded = shipped is None
        self._tags: dict[str, Tag] = {}
        self._folders: dict[Path, tuple[str, ...]] = {}
        self._version = 0

    @property
    def version(self) -> int:
        """Goes up whenever the registry's tags change, or a kind they resolve to (`changed`):
        what was resolved before may differ. The shipped tags are read first, so a version
        names what a resolution will see."""
        self._ensure_loaded()
        return self._version

    def changed(self) -> None:
        """Note a change that resolving a tag reads outside the tags: a kind registered or
        replaced (`hetsim.target.catalog.register_kind`)."""
        self._version += 1

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self._loaded = True
            assert self._shipped is not None, "a lazy registry has a shipped folder"
            for tag in read_tag_dir(self._shipped):
                self._tags.setdefault(tag.name, tag)
            self._folders[self._shipped.resolve()] = tuple(t.name for t in self._tags.values())

    def __iter__(self) -> Iterator[str]:
        self._ensure_loaded()
        return iter(sorted(self._tags))

    def __len__(self) -> int:
        self._ensure_loaded()
        return len(self._tags)

    def __contains__(self, name: object) -> bool:
        return self.find(name) is not None

    def find(self, name: object) -> str | None:
        """The registered spelling of tag `name` (matched case-insensitively), or None."""
        if not isinstance(name, str):
            return None
        self._ensure_loaded()
        if name in self._tags:
            return name
        folded = name.lower()
        return next((n for n in self._tags if n.lower() == folded), None)

    def get(self, name: str) -> Tag:
        """The tag registered as `name` (its registered spelling)."""
        self._ensure_loaded()
        return self._tags[name]

    def folders(self) -> tuple[Path, ...]:
        """The folders tags were read from, shipped first (also once it is read again)."""
        self._ensure_loaded()
        shipped = self._shipped.resolve() if self._shipped is not None else None
        return tuple(sorted(self._folders, key=lambda folder: folder != shipped))

    def name_for_file(self, path: str | Path) -> str | None:
        """The tag a file defines, when it lies in a registered folder; else None."""
        self._ensure_loaded()
        resolved = Path(path).resolve()
        for folder, names in self._folders.items():
            if resolved.is_relative_to(folder):
                name = resolved.relative_to(folder).with_suffix("").as_posix()
                if name in names:
                    return name
        return None

    def staged(self, tags: Iterable[Tag]) -> TagRegistry:
        """A copy with `tags` added, to resolve new tags against before committing them."""
        self._ensure_loaded()
        copy = TagRegistry()
        copy._tags = {**self._tags, **{t.name: t for t in tags}}
        copy._folders = dict(self._folders)
        return copy

    def without(self, names: Iterable[str]) -> TagRegistry:
        """A copy without the tags `names` (registered spellings), to check a removal against."""
        self._ensure_loaded()
        gone = set(names)
        copy = TagRegistry()
        copy._tags = {n: t for n, t in self._tags.items() if n not in gone}
        copy._folders = {
            f: tuple(n for n in ns if n not in gone) for f, ns in self._folders.items()
        }
        return copy

    def commit(self, tags: Iterable[Tag], folder: Path | None = None) -> None:
        """Add checked `tags` (from `folder`, when they came from one)."""
        self._ensure_loaded()
        tags = list(tags)
        self._tags.update((t.name, t) for t in tags)
        self._version += 1
        if folder is not None:
            self._folders[folder.resolve()] = tuple(t.name for t in tags)

    def remove_folder(self, folder: str | Path) -> tuple[str, ...]:
        """Forget a registered folder and its tags; return the names removed."""
        self._ensure_loaded()
        names = self._folders.pop(Path(folder).resolve(), ())
        for name in names:
            self._tags.pop(name, None)
        self._version += 1
        return names

    def remove(self, name: str) -> None:
        """Forget one tag (matched ignoring case, as `find` matches it), and, if a folder's, drop
        it from that folder's names: its file is then read as a target, and removing the
        folder later leaves a tag registered again under that name alone."""
        self._ensure_loaded()
        found = self.find(name)
        if found is None:
            return
        del self._tags[found]
        for folder, names in self._folders.items():
            if found in names:
                self._folders[folder] = tuple(n for n in names if n != found)
        self._version += 1

    def folder_tags(self, folder: str | Path) -> list[Tag]:
        """The tags registered from `folder` (none when it is not registered)."""
        self._ensure_loaded()
        names = self._folders.get(Path(folder).resolve(), ())
        return [self._tags[n] for n in names if n in self._tags]

    def __repr__(self) -> str:
        state = f"{len(self._tags)} tags" if self._loaded else "not read yet"
        return f"<TagRegistry {state}, folders={[str(f) for f in self._folders]}>"


def valid_tag_name(name: object) -> bool:
    """Whether `name` is a well-formed tag name (words joined by ``/``).

    >>> valid_tag_name("arm/cortex-a72"), valid_tag_name("Arm//x"), valid_tag_name(3)
    (True, False, False)
    """
    return isinstance(name, str) and re.fullmatch(TAG_PATTERN, name) is not None


TAGS = TagRegistry(shipped_tag_dir())
