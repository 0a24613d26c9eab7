"""A content-addressed on-disk cache of compiled kernels.

The key is a hash of everything that decides the binary: the source, the build options, the
compiler's identity and version, and the contents of the header folders. An entry is one file
(magic, digest, metadata JSON, cubin) written to a temporary file in the same folder, fsynced,
and renamed into place, so concurrent writers of one key each leave a whole entry and readers
never see half of one. A truncated or garbled entry fails its digest and is discarded.
No lock: rename is atomic, and two processes missing at once merely both compile.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

MAGIC = b"ARGUS-CUBIN-1\n"
FORMAT_VERSION = 1
HEADER_SUFFIXES = (".cuh", ".h", ".hpp", ".inc")
STALE_TEMP_SECONDS = 3600  # a temp file this old belongs to a writer that died


def default_cache_dir() -> Path:
    """$ARGUS_CACHE_DIR, else ~/.cache/argus."""
    env = os.environ.get("ARGUS_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "argus"


def header_digest(dirs) -> str:
    """A hash of every header file under `dirs` (relative path and bytes), in a fixed order."""
    h = hashlib.sha256()
    for index, folder in enumerate(dirs):
        root = Path(folder)
        if not root.is_dir():
            h.update(f"missing:{index}:{folder}\n".encode())
            continue
        for path in sorted(p for p in root.rglob("*") if p.suffix in HEADER_SUFFIXES and p.is_file()):
            data = path.read_bytes()
            h.update(f"{index}:{path.relative_to(root).as_posix()}:{len(data)}\n".encode())
            h.update(data)
    return h.hexdigest()


@dataclass
class CacheEntry:
    """One compiled kernel: its key, the cubin, and what the build recorded (log, resources)."""

    key: str
    cubin: bytes
    meta: dict
    path: Path
    from_cache: bool = False
    _sass: object = field(default=None, repr=False)

    @property
    def log(self) -> str:
        return self.meta.get("log", "")

    @property
    def compiler(self) -> str:
        return self.meta.get("compiler", "")

    @property
    def resources(self):
        """The ptxas resource report (argus.runtime.resources.ResourceReport)."""
        from argus.runtime.resources import ResourceReport

        return ResourceReport.from_json(self.meta.get("resources", {}))

    def sass(self):
        """The disassembly of the cubin (argus.runtime.sass.SassListing), made once per entry."""
        if self._sass is None:
            from argus.runtime.sass import disassemble

            self._sass = disassemble(self.cubin)
        return self._sass


def encode_entry(key: str, cubin: bytes, meta: dict) -> bytes:
    meta_bytes = json.dumps({**meta, "key": key}, sort_keys=True).encode()
    payload = struct.pack(">Q", len(meta_bytes)) + meta_bytes + cubin
    return MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


def decode_entry(key: str, data: bytes) -> tuple[bytes, dict] | None:
    """(cubin, meta) if `data` is a whole, untampered entry for `key`; None otherwise."""
    head = len(MAGIC) + 65
    if len(data) < head + 8 or not data.startswith(MAGIC) or data[head - 1:head] != b"\n":
        return None
    digest, payload = data[len(MAGIC):head - 1], data[head:]
    if hashlib.sha256(payload).hexdigest().encode() != digest:
        return None
    (meta_len,) = struct.unpack(">Q", payload[:8])
    if 8 + meta_len > len(payload):
        return None
    try:
        meta = json.loads(payload[8:8 + meta_len])
    except ValueError:
        return None
    if meta.get("key") != key:
        return None
    return payload[8 + meta_len:], meta


class KernelCache:
    """Compiled kernels on disk under `root` (default: $ARGUS_CACHE_DIR or ~/.cache/argus)."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_cache_dir()

    def key(self, source: str, options: dict, compiler_identity: str, header_dirs) -> str:
        """The content address of a build: changes when anything that shapes the binary does."""
        ident = {
            "format": FORMAT_VERSION,
            "source": hashlib.sha256(source.encode()).hexdigest(),
            "options": options,
            "compiler": compiler_identity,
            "headers": header_digest(header_dirs),
        }
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()

    def path_for(self, key: str) -> Path:
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"cache key must be 64 lowercase hex digits, got {key!r}")
        return self.root / f"v{FORMAT_VERSION}" / key[:2] / f"{key}.entry"

    def load(self, key: str) -> CacheEntry | None:
        """The entry for `key`, or None when absent; a corrupt entry is deleted and reads as absent."""
        path = self.path_for(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        decoded = decode_entry(key, data)
        if decoded is None:
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            return None
        cubin, meta = decoded
        return CacheEntry(key, cubin, meta, path, from_cache=True)

    def store(self, key: str, cubin: bytes, meta: dict) -> CacheEntry:
        """Write the entry atomically (temp file in the same folder, fsync, rename)."""
        path = self.path_for(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".entry")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(encode_entry(key, cubin, meta))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        _fsync_dir(path.parent)
        _prune_stale_temp_files(path.parent)
        return CacheEntry(key, cubin, {**meta, "key": key}, path, from_cache=False)

    def get_or_build(self, key: str, make: Callable[[], tuple[bytes, dict]]) -> CacheEntry:
        """The cached entry, or `make()`'s (cubin, meta) stored under `key` on a miss."""
        entry = self.load(key)
        if entry is not None:
            return entry
        cubin, meta = make()
        return self.store(key, cubin, meta)


def _prune_stale_temp_files(folder: Path) -> None:
    """Remove temp files of writers that died mid-write (young ones may belong to live writers)."""
    now = time.time()
    for tmp in folder.glob(".tmp-*.entry"):
        try:
            if now - tmp.stat().st_mtime > STALE_TEMP_SECONDS:
                tmp.unlink()
        except FileNotFoundError:
            pass


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
