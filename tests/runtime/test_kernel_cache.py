"""The cache: hits compile nothing, any change of input misses, corruption and races are survived."""

import multiprocessing
import os
import time
from pathlib import Path

import pytest

from argus.runtime import BuildOptions, KernelCache, build_kernel
from argus.runtime import build as build_module
from argus.runtime.cache import decode_entry, default_cache_dir, header_digest
from argus.runtime.toolchain import ARGUS_HEADER_DIR
from runtime_kernels import requires_compiler

SMALL = """\
#include "argus_fence.cuh"
extern "C" __global__ void small(float* out) {
  argus::fence_proxy_async_shared();
  out[threadIdx.x] = SCALE * threadIdx.x;
}
"""
SMALL_OPTIONS = BuildOptions(defines=(("SCALE", "2.0f"),))


class CompileCounter:
    """Wraps build.compile_cubin to count real compiles."""

    def __init__(self, monkeypatch):
        self.calls = 0
        real = build_module.compile_cubin

        def counting(source, options):
            self.calls += 1
            return real(source, options)

        monkeypatch.setattr(build_module, "compile_cubin", counting)


def forbid_compiling(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the compiler was invoked on what should be a cache hit")

    monkeypatch.setattr(build_module, "compile_cubin", refuse)


@requires_compiler
def test_second_build_is_a_fast_hit_without_compiling(tmp_path, monkeypatch):
    cache = KernelCache(tmp_path)
    first = build_kernel(SMALL, SMALL_OPTIONS, cache)
    assert not first.from_cache
    forbid_compiling(monkeypatch)
    start = time.perf_counter()
    second = build_kernel(SMALL, SMALL_OPTIONS, cache)
    elapsed = time.perf_counter() - start
    assert second.from_cache and second.cubin == first.cubin
    assert second.resources.kernels["small"].registers == first.resources.kernels["small"].registers
    assert elapsed < 0.050, f"cache hit took {elapsed * 1000:.1f} ms"


@requires_compiler
def test_every_input_change_misses(tmp_path, monkeypatch):
    extra = tmp_path / "include"
    extra.mkdir()
    (extra / "scale.cuh").write_text("#define EXTRA 1\n")
    cache = KernelCache(tmp_path / "cache")
    counter = CompileCounter(monkeypatch)
    options = BuildOptions(defines=(("SCALE", "2.0f"),), include_dirs=(str(extra),))
    build_kernel(SMALL, options, cache)
    build_kernel(SMALL, options, cache)
    assert counter.calls == 1
    build_kernel(SMALL.replace("threadIdx.x;", "threadIdx.x + 1;"), options, cache)  # source
    assert counter.calls == 2
    build_kernel(SMALL, BuildOptions(defines=(("SCALE", "3.0f"),), include_dirs=(str(extra),)), cache)  # option
    assert counter.calls == 3
    (extra / "scale.cuh").write_text("#define EXTRA 2\n")  # header contents
    build_kernel(SMALL, options, cache)
    assert counter.calls == 4
    build_kernel(SMALL, options, cache)
    assert counter.calls == 4


def test_key_depends_on_compiler_identity_and_argus_headers(tmp_path):
    cache = KernelCache(tmp_path)
    base = cache.key("src", {"arch": "sm_90a"}, "nvcc 13.0", [ARGUS_HEADER_DIR])
    assert base == cache.key("src", {"arch": "sm_90a"}, "nvcc 13.0", [ARGUS_HEADER_DIR])
    assert base != cache.key("src", {"arch": "sm_90a"}, "nvrtc 13.0", [ARGUS_HEADER_DIR])
    copy = tmp_path / "headers"
    copy.mkdir()
    for header in ARGUS_HEADER_DIR.glob("*.cuh"):
        (copy / header.name).write_bytes(header.read_bytes())
    assert header_digest([copy]) == header_digest([ARGUS_HEADER_DIR])
    with open(copy / "argus_wgmma.cuh", "a") as f:
        f.write("\n// edited\n")
    assert header_digest([copy]) != header_digest([ARGUS_HEADER_DIR])


def fake_make(payload=b"\x7fELF fake cubin"):
    return lambda: (payload, {"log": "fake", "resources": {}})


@pytest.mark.parametrize("damage", ["truncate", "flip_byte", "garbage", "empty"])
def test_corrupt_entry_is_discarded_and_rebuilt(tmp_path, damage):
    cache = KernelCache(tmp_path)
    key = cache.key("src", {}, "fake", [])
    cache.get_or_build(key, fake_make())
    path = cache.path_for(key)
    data = path.read_bytes()
    damaged = {"truncate": data[: len(data) - 5], "flip_byte": data[:-3] + bytes([data[-3] ^ 0x40]) + data[-2:],
               "garbage": os.urandom(len(data)), "empty": b""}[damage]
    path.write_bytes(damaged)
    assert cache.load(key) is None
    assert not path.exists()
    rebuilt = cache.get_or_build(key, fake_make())
    assert not rebuilt.from_cache and rebuilt.cubin == b"\x7fELF fake cubin"
    assert cache.load(key).cubin == b"\x7fELF fake cubin"


def test_entry_of_another_key_is_not_accepted(tmp_path):
    cache = KernelCache(tmp_path)
    a, b = cache.key("a", {}, "fake", []), cache.key("b", {}, "fake", [])
    cache.get_or_build(a, fake_make(b"A"))
    path_b = cache.path_for(b)
    path_b.parent.mkdir(parents=True, exist_ok=True)
    path_b.write_bytes(cache.path_for(a).read_bytes())  # a valid entry, but filed under b
    assert decode_entry(b, path_b.read_bytes()) is None
    assert cache.load(b) is None


def _race_writer(args):
    """One process of the race: store the same key many times, check every read is whole."""
    root, key, worker = args
    cache = KernelCache(root)
    payload = (b"\x7fELF" + b"cubin-of-the-key" * 4096)
    seen = 0
    for round_ in range(25):
        entry = cache.get_or_build(key, lambda: (payload, {"log": f"worker {worker}", "resources": {}}))
        assert entry.cubin == payload
        cache.store(key, payload, {"log": f"worker {worker} round {round_}", "resources": {}})
        loaded = cache.load(key)
        assert loaded is not None and loaded.cubin == payload
        seen += 1
    return seen


def test_concurrent_writers_of_one_key_all_get_a_valid_entry(tmp_path):
    cache = KernelCache(tmp_path)
    key = cache.key("raced", {}, "fake", [])
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(6) as pool:
        results = pool.map(_race_writer, [(str(tmp_path), key, w) for w in range(6)])
    assert results == [25] * 6
    assert cache.load(key) is not None
    leftovers = [p.name for p in Path(cache.path_for(key).parent).iterdir() if p.name.startswith(".tmp-")]
    assert leftovers == []


def _real_build(args):
    root, source = args
    entry = build_kernel(source, SMALL_OPTIONS, KernelCache(root))
    return entry.cubin


@requires_compiler
def test_concurrent_real_builds_of_one_kernel(tmp_path):
    source = SMALL.replace("SCALE *", "SCALE * 3.0f *")
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(3) as pool:
        cubins = pool.map(_real_build, [(str(tmp_path), source)] * 3)
    assert all(c.startswith(b"\x7fELF") for c in cubins)
    entry = build_kernel(source, SMALL_OPTIONS, KernelCache(tmp_path))
    assert entry.from_cache and entry.cubin in cubins


def test_cache_location_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert KernelCache().root == tmp_path / "elsewhere"
    monkeypatch.delenv("ARGUS_CACHE_DIR")
    assert default_cache_dir() == Path.home() / ".cache" / "argus"


def test_bad_key_is_refused(tmp_path):
    with pytest.raises(ValueError, match="64 lowercase hex digits"):
        KernelCache(tmp_path).path_for("../../etc/passwd")


def test_stale_temp_files_of_dead_writers_are_pruned(tmp_path):
    cache = KernelCache(tmp_path)
    key = cache.key("pruned", {}, "fake", [])
    folder = cache.path_for(key).parent
    folder.mkdir(parents=True)
    stale, live = folder / ".tmp-dead.entry", folder / ".tmp-live.entry"
    stale.write_bytes(b"half an entry")
    live.write_bytes(b"being written")
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    cache.store(key, b"\x7fELF", {"resources": {}})
    assert not stale.exists() and live.exists()
