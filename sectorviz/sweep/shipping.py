"""A task packed for a machine that has sectorviz installed but not the user's folders.

What is sent with each task (Shipped): the task itself (a sweep point's pattern document and
its work budget, or a batch file's path), the bytes of every file of the pattern's root it
reads (the pattern file, its kernel's `.cu` or `.ptx` and the `#include`s of the root, its
`.npy` values files), the root's place (a repository's top folder, so that `../include`
resolves as here) and this run's $SECTORVIZ_ENGINE. Nothing outside the pattern's root is
sent: a compiler's own headers come from the worker's install.

The files are found here by reading the pattern as a worker will: its front end is loaded
(files.read_bytes records each file it reads, memo.recording collects them; the front end
names the files it reads later), once per pattern (a sweep's points share theirs). Loading
the front end is not the analysis: parsing the kernel, or compiling it for the compiled
engine (PTX cache hits after the first run).

On the worker (run_shipped) the files are written at their absolute paths under a mirror
folder (in the worker's temporary folder, `sectorviz-shipped-UID/DIGEST`, kept for the next
task of the same files: its compile is then a PTX cache hit), the task runs there, and the
mirror's name is taken out of the result (an error line names the file as here), so the
result is the one the local pool gives.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..engine.readings import ENGINE_VAR
from ..model import Pattern, load_pattern, pattern_from_dict
from ..model.files import pattern_roots, root_of
from ..model.frontend import kernel_for
from ..model.memo import recording
from .points import FileTask, PointTask

Task = PointTask | FileTask
MIRRORS = "sectorviz-shipped"  # the folder of mirrors in a worker's temporary folder


@dataclass(frozen=True)
class Shipped:
    """One task with what it reads: `files` maps each real path here to its bytes."""

    fn: Callable[[Any], dict]
    task: Task
    files: dict[str, bytes]
    repository: str | None  # the pattern's root when it is a repository's top folder
    engine: str | None  # this run's $SECTORVIZ_ENGINE


def ship_all(fn: Callable[[Any], dict], tasks: Sequence[Task]) -> list[Shipped]:
    """Each task packed with the files its pattern reads, found once per pattern."""
    found: dict[str, tuple[dict[str, bytes], str | None]] = {}
    engine = os.environ.get(ENGINE_VAR)
    shipped = []
    for task in tasks:
        key = _pattern_key(task)
        if key not in found:
            found[key] = (files_read(task), _repository(_base_dir(task)))
        files, repository = found[key]
        shipped.append(Shipped(fn, task, files, repository, engine))
    return shipped


def files_read(task: Task) -> dict[str, bytes]:
    """The files of the pattern's root that reading the task's pattern reads -> {real path:
    bytes}; a pattern that fails to load sends what it read until then (the worker gives
    the same error)."""
    later: tuple[Path, ...] = ()
    with recording() as read:
        try:
            later = kernel_for(_pattern(task)).files_read
        except Exception:  # noqa: BLE001 - the worker reports the pattern's own error
            pass
    roots = pattern_roots(_base_dir(task))
    paths = sorted({os.path.realpath(p) for p in read} | {os.path.realpath(p) for p in later})
    return {p: Path(p).read_bytes() for p in paths if roots.allows(p) and os.path.isfile(p)}


def run_shipped(shipped: Shipped) -> dict:
    """On a worker: the task's result, run on its files laid out in their mirror."""
    mirror = _laid_out(shipped)
    with _engine(shipped.engine):
        result = shipped.fn(_moved(shipped.task, mirror))
    result = _unmirrored(result, str(mirror))
    if isinstance(shipped.task, FileTask):
        result["file"] = shipped.task.path
    return result


def lost(task: Task, reason: str) -> dict:
    """The result of a task the cluster could not run: a gap with its reason."""
    if isinstance(task, FileTask):
        return {"file": task.path, "error": reason}
    return {"error": reason}


def _pattern(task: Task) -> Pattern:
    if isinstance(task, FileTask):
        return load_pattern(task.path)
    return pattern_from_dict(task.doc, task.base_dir)


def _base_dir(task: Task) -> str:
    if isinstance(task, FileTask):
        return os.path.dirname(task.path) or "."
    return task.base_dir


def _pattern_key(task: Task) -> str:
    """Tasks of one key read the same files: a file, or a pattern whatever its params."""
    if isinstance(task, FileTask):
        return os.path.realpath(task.path)
    doc = {key: value for key, value in task.doc.items() if key != "params"}
    return json.dumps([os.path.realpath(task.base_dir), doc], sort_keys=True, default=str)


def _repository(base_dir: str) -> str | None:
    root = root_of(base_dir)
    return str(root) if root != Path(os.path.realpath(base_dir)) else None


def _mirrored(path: str, mirror: Path) -> Path:
    """Where `path` (absolute, real) lies in the mirror."""
    absolute = Path(os.path.realpath(path))
    return mirror / absolute.relative_to(absolute.anchor)


def _laid_out(shipped: Shipped) -> Path:
    """The mirror of the shipped files: a folder named by their digest in this user's
    MIRRORS folder, written once (in a folder beside it, then renamed) and kept, so the
    tasks after the first find it, and the kernel's compile in the PTX cache."""
    home = Path(os.path.realpath(tempfile.gettempdir())) / f"{MIRRORS}-{_user()}"
    home.mkdir(mode=0o700, exist_ok=True)
    mirror = home / _digest(shipped)
    if not mirror.is_dir():
        fresh = Path(tempfile.mkdtemp(dir=home))
        _lay_out(shipped, fresh)
        try:
            os.rename(fresh, mirror)
        except OSError:  # another task laid it out first
            shutil.rmtree(fresh, ignore_errors=True)
    return mirror


def _digest(shipped: Shipped) -> str:
    """The SHA-256 of the files, their paths and the repository's place."""
    h = hashlib.sha256(repr((sorted(shipped.files), shipped.repository)).encode())
    for path in sorted(shipped.files):
        h.update(hashlib.sha256(shipped.files[path]).digest())
    return h.hexdigest()


def _user() -> str:
    return str(os.getuid()) if hasattr(os, "getuid") else "user"


def _lay_out(shipped: Shipped, mirror: Path) -> None:
    """Write the shipped files (and the repository's .git mark) under `mirror`."""
    for path, data in shipped.files.items():
        target = _mirrored(path, mirror)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    if shipped.repository is not None:
        (_mirrored(shipped.repository, mirror) / ".git").mkdir(parents=True, exist_ok=True)
    _mirrored(_base_dir(shipped.task), mirror).mkdir(parents=True, exist_ok=True)


def _moved(task: Task, mirror: Path) -> Task:
    """The task reading its files from the mirror."""
    if isinstance(task, FileTask):
        return replace(task, path=str(_mirrored(task.path, mirror)))
    return replace(task, base_dir=str(_mirrored(task.base_dir, mirror)))


def _unmirrored(value: Any, mirror: str) -> Any:
    """`value` (a result) with the mirror's folder taken out of every string."""
    if isinstance(value, str):
        return value.replace(mirror, "")
    if isinstance(value, dict):
        return {key: _unmirrored(item, mirror) for key, item in value.items()}
    if isinstance(value, list):
        return [_unmirrored(item, mirror) for item in value]
    return value


@contextlib.contextmanager
def _engine(engine: str | None) -> Iterator[None]:
    """$SECTORVIZ_ENGINE as the client had it, while the task runs."""
    before = os.environ.get(ENGINE_VAR)
    _set_env(ENGINE_VAR, engine)
    try:
        yield
    finally:
        _set_env(ENGINE_VAR, before)


def _set_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
