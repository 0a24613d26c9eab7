"""Shared memory: byte buffers with typed, staged views, and the hazard tracker.

Buffers are carved out of one byte array (1024 B aligned, as SW128 operands need), each
with an element type and an optional leading stage dimension. Every access made through
the machine is logged with its byte range, its proxy (generic: ld/st.shared; async: TMA,
wgmma, bulk store) and its vector-clock event. Two kinds of hazard are reported:

- race: a write and another agent's (or async op's) access to the same bytes with no
  happens-before order between them (no barrier, wait or group retirement in between);
- missing proxy fence: an async-proxy read of bytes last written by generic stores with
  no fence.proxy.async between: neither the writer fenced after the write, nor a thread
  that had acquired the write (its event happens before the fence) fenced before issuing
  the read (the consumer of a cp.async gather fences after its barrier wait).

An access is one instruction's bytes: one range, or several (`spans`: the 16-byte chunks a
thread's cp.async copies of a gather land in, rows apart).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from argus.limits import SMEM_PER_SM

from .clocks import Event
from .dtypes import ElementType, element_type
from .errors import MemoryModelError
from .smem_image import swizzled, tile_image

ALIGNMENT = 1024


@dataclass(frozen=True)
class Region:
    """A byte range of one buffer (a stage, a band of rows, the whole), typed.

    In value mode the range is contiguous and holds the tile row-major. In fragment-exact
    mode `pre` gives each element's pre-swizzle byte address (smem_image.tile_image) and
    the buffer's swizzle places it; lo..hi then bounds the bytes the region touches.
    """

    buffer: "SharedBuffer"
    stage: int | None
    lo: int
    hi: int
    shape: tuple[int, ...]
    first_row: int | None = None  # set for a band of rows cut out of a stage or buffer
    pre: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def dtype(self) -> ElementType:
        return self.buffer.dtype

    @property
    def nbytes(self) -> int:
        """Bytes of the elements (what a TMA into this region counts toward tx)."""
        return int(np.prod(self.shape)) * self.dtype.itemsize

    @property
    def exact(self) -> bool:
        return self.pre is not None

    @property
    def swizzle(self) -> str:
        return self.buffer.swizzle

    def addresses(self) -> np.ndarray:
        """Final byte address of every element (exact mode)."""
        return swizzled(self.buffer.swizzle, self.pre)

    def rows(self, start: int, stop: int) -> "Region":
        """Rows [start, stop) along the leading axis (contiguous bytes in value mode)."""
        if not 0 <= start < stop <= self.shape[0]:
            raise MemoryModelError(
                f"rows {start}..{stop} out of range for {self.describe()} with "
                f"{self.shape[0]} rows")
        base = self.first_row or 0
        shape = (stop - start, *self.shape[1:])
        if self.exact:
            pre = self.pre[start:stop]
            addr = swizzled(self.buffer.swizzle, pre)
            return Region(self.buffer, self.stage, int(addr.min()),
                          int(addr.max()) + self.dtype.itemsize, shape, base + start, pre)
        row_bytes = (self.hi - self.lo) // self.shape[0]
        return Region(self.buffer, self.stage, self.lo + start * row_bytes,
                      self.lo + stop * row_bytes, shape, base + start)

    def intervals(self) -> list[tuple[int, int]]:
        """The byte ranges the region covers: one in value mode; in exact mode the runs of
        its (swizzled) element addresses, so interleaved bands do not appear to overlap."""
        if not self.exact:
            return [(self.lo, self.hi)]
        key = (self.stage, self.first_row, self.shape, self.lo)
        cache = self.buffer.interval_cache
        if key not in cache:
            starts = np.sort(self.addresses(), axis=None)
            size = self.dtype.itemsize
            breaks = np.flatnonzero(np.diff(starts) != size) + 1
            cache[key] = [(int(run[0]), int(run[-1]) + size) for run in np.split(starts, breaks)]
        return cache[key]

    def codes(self) -> np.ndarray:
        """The raw codes (no tracking: the machine's instructions do the tracking); a view
        in value mode, a copy gathered through the image in exact mode."""
        if self.exact:
            return gather_codes(self.buffer.memory.bytes, self.addresses(), self.dtype)
        raw = self.buffer.memory.bytes[self.lo:self.hi]
        return raw.view(self.dtype.storage).reshape(self.shape)

    def store_codes(self, codes) -> None:
        codes = np.asarray(codes, dtype=self.dtype.storage)
        if self.exact:
            scatter_codes(self.buffer.memory.bytes, self.addresses(), codes, self.dtype)
        else:
            self.codes()[...] = codes

    def describe(self) -> str:
        where = f"[stage {self.stage}]" if self.stage is not None else ""
        if self.first_row is not None:
            where += f"[rows {self.first_row}..{self.first_row + self.shape[0]}]"
        return f"{self.buffer.name}{where} bytes {self.lo}..{self.hi}"


def _byte_index(addresses: np.ndarray, itemsize: int) -> np.ndarray:
    return addresses[..., None] + np.arange(itemsize, dtype=np.int64)


def gather_codes(memory: np.ndarray, addresses: np.ndarray, dtype: ElementType) -> np.ndarray:
    """Codes of `dtype` read at byte `addresses` (little-endian, as the GPU)."""
    raw = np.ascontiguousarray(memory[_byte_index(addresses, dtype.itemsize)])
    return raw.view(dtype.storage).reshape(addresses.shape)


def scatter_codes(memory: np.ndarray, addresses: np.ndarray, codes, dtype: ElementType) -> None:
    codes = np.ascontiguousarray(np.broadcast_to(np.asarray(codes, dtype=dtype.storage),
                                                 addresses.shape))
    memory[_byte_index(addresses, dtype.itemsize)] = codes.view(np.uint8).reshape(
        addresses.shape + (dtype.itemsize,))


@dataclass
class SharedBuffer:
    memory: "SharedMemory"
    name: str
    dtype: ElementType
    tile_shape: tuple[int, ...]
    stages: int
    offset: int
    swizzle: str = "none"
    interval_cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def stage_bytes(self) -> int:
        return int(np.prod(self.tile_shape)) * self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.stage_bytes * max(self.stages, 1)

    def stage(self, s: int) -> Region:
        if not self.stages:
            raise MemoryModelError(f"buffer {self.name!r} has no stage dimension; use .whole()")
        if not 0 <= s < self.stages:
            raise MemoryModelError(
                f"stage {s} out of range for buffer {self.name!r} with {self.stages} stages; "
                f"compute the stage as k % {self.stages}")
        lo = self.offset + s * self.stage_bytes
        pre = (tile_image(lo, self.tile_shape, self.dtype.itemsize, self.swizzle)
               if self.memory.exact else None)
        return Region(self, s, lo, lo + self.stage_bytes, self.tile_shape, pre=pre)

    def whole(self) -> Region:
        shape = (self.stages, *self.tile_shape) if self.stages else self.tile_shape
        pre = None
        if self.memory.exact:
            tiles = [tile_image(self.offset + s * self.stage_bytes, self.tile_shape,
                                self.dtype.itemsize, self.swizzle)
                     for s in range(max(self.stages, 1))]
            pre = np.stack(tiles) if self.stages else tiles[0]
        return Region(self, None, self.offset, self.offset + self.nbytes, shape, pre=pre)


@dataclass
class Hazard:
    kind: str  # "race", "missing-proxy-fence" or "unwaited-async"
    region: str
    first: str
    second: str

    def __str__(self) -> str:
        if self.kind == "unwaited-async":
            return (f"{self.first} finished with {self.second} never retired; end with "
                    f"wgmma.wait_group 0 / cp.async.bulk.wait_group 0")
        if self.kind == "race":
            return (f"race on {self.region}: {self.first} and {self.second} are not ordered "
                    f"by any barrier, wait or group retirement")
        return (f"missing fence.proxy.async on {self.region}: {self.second} reads bytes "
                f"{self.first} wrote with generic stores; the writer must execute "
                f"fence.proxy.async after the write, or the issuing thread after it has "
                f"acquired the write (its barrier wait) and before the async operation")


@dataclass
class _Access:
    lo: int
    hi: int
    write: bool
    proxy: str
    event: Event
    label: str
    fenced: bool = False          # its writer executed fence.proxy.async after it
    spans: tuple | None = None    # the byte ranges, when not the one range lo..hi
    # fence.proxy.async events of threads that had acquired this write: an async read
    # those fences happen before sees it
    fences: list = field(default_factory=list)

    def ranges(self):
        return self.spans if self.spans is not None else ((self.lo, self.hi),)

    def overlaps(self, other: "_Access") -> bool:
        if not (self.lo < other.hi and other.lo < self.hi):
            return False
        if self.spans is None and other.spans is None:
            return True
        return any(a < d and c < b for a, b in self.ranges() for c, d in other.ranges())

    def covers(self, other: "_Access") -> bool:
        """Every byte of `other` is one of this access's."""
        return all(any(a <= c and d <= b for a, b in self.ranges()) for c, d in other.ranges())

    def fenced_for(self, read: Event) -> bool:
        return self.fenced or any(f.happens_before(read) for f in self.fences)

    def describe(self) -> str:
        verb = "write" if self.write else "read"
        return f"{self.label} ({verb} by {self.event.owner_name}, {self.proxy} proxy)"


@dataclass
class SharedMemory:
    capacity: int = SMEM_PER_SM
    exact: bool = False  # regions carry byte images through the buffers' swizzles
    bytes: np.ndarray = field(init=False)
    buffers: dict[str, SharedBuffer] = field(default_factory=dict)
    _log: list[_Access] = field(default_factory=list)
    _top: int = 0

    def __post_init__(self):
        self.bytes = np.zeros(self.capacity, dtype=np.uint8)

    def alloc(self, name: str, dtype, shape, stages: int = 0,
              swizzle: str = "none") -> SharedBuffer:
        """Allocate a buffer of `stages` copies of a tile of `shape` (stages=0: no stage dim);
        the swizzle matters in exact mode only (value mode keeps tiles row-major)."""
        if name in self.buffers:
            raise MemoryModelError(f"shared buffer {name!r} allocated twice; pick another name")
        dt = element_type(dtype)
        offset = -(-self._top // ALIGNMENT) * ALIGNMENT
        buf = SharedBuffer(self, name, dt, tuple(int(d) for d in shape), int(stages), offset,
                           swizzle)
        if offset + buf.nbytes > self.capacity:
            raise MemoryModelError(
                f"shared buffer {name!r} ({buf.nbytes} B at offset {offset}) exceeds the "
                f"{self.capacity} B of shared memory; use fewer stages or smaller tiles")
        self.buffers[name] = buf
        self._top = offset + buf.nbytes
        return buf

    # -- tracking -----------------------------------------------------------------
    def access(self, region: Region, write: bool, proxy: str, event: Event, label: str,
               detect_races: bool = True) -> list[Hazard]:
        """Log an access; return the hazards it reveals against earlier accesses."""
        hazards: list[Hazard] = []
        for lo, hi in region.intervals():
            for h in self._access(region, lo, hi, write, proxy, event, label, detect_races):
                if h not in hazards:
                    hazards.append(h)
        return hazards

    def access_spans(self, spans, where: str, write: bool, proxy: str, event: Event,
                     label: str, detect_races: bool = True) -> list[Hazard]:
        """Log one access of several byte ranges (a thread's cp.async chunks); `where`
        names the region in hazards."""
        spans = tuple(sorted(spans))
        new = _Access(spans[0][0], max(hi for _, hi in spans), write, proxy, event, label,
                      spans=spans)
        return self._log_access(new, where, detect_races)

    def _access(self, region, lo, hi, write, proxy, event, label, detect_races):
        return self._log_access(_Access(lo, hi, write, proxy, event, label),
                                region.describe(), detect_races)

    def _log_access(self, new: _Access, where: str, detect_races: bool) -> list[Hazard]:
        write, proxy, event = new.write, new.proxy, new.event
        hazards: list[Hazard] = []
        keep: list[_Access] = []
        for old in self._log:
            if not old.overlaps(new):
                keep.append(old)
                continue
            ordered = old.event.happens_before(event)
            if detect_races and (old.write or write) and not ordered:
                hazards.append(Hazard("race", where, old.describe(), new.describe()))
            if (proxy == "async" and not write and old.write and old.proxy == "generic"
                    and not old.fenced_for(event)):
                hazards.append(Hazard("missing-proxy-fence", where,
                                      old.describe(), new.describe()))
            superseded = ordered and new.covers(old) and (write or not old.write)
            if not superseded:
                keep.append(old)
        keep.append(new)
        self._log = keep
        return hazards

    def fence_proxy_async(self, owner_id: int, fence: Event | None = None) -> None:
        """fence.proxy.async by one agent: its generic writes so far become async-visible,
        and so do the generic writes it has acquired (that happen before `fence`), to the
        async operations it issues after the fence."""
        for acc in self._log:
            if not (acc.write and acc.proxy == "generic"):
                continue
            if acc.event.owner == owner_id:
                acc.fenced = True
            elif fence is not None and acc.event.happens_before(fence):
                acc.fences.append(fence)
