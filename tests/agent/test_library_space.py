"""The library GEMM's space (argus/agent/library_space.py) follows argus/ops/gemm_configs.py:
its values are probed from knobs_to_config (change the library, the space changes), its
specialisations are exactly what argus.ops.matmul builds, one configuration per kernel, the
shape table's choice is found in it, and the smallest valid configuration is the one the
real verifier proves (a one-stage ring is rejected)."""
import importlib
from dataclasses import replace

import pytest

import argus.ops.gemm_configs as gemm_configs
from argus.agent.gemm_config import KNOB_BY_NAME, GemmConfig
from argus.agent.library_space import LibrarySpace, SpaceError, kernel_constants
from argus.agent.library_verifier import LibraryVerifier, VerifierMissing
from argus.agent.task import GemmTask
from argus.runtime.launch_errors import LaunchError
from tests.agent.fake_verifier import FakeVerifier

TASK = GemmTask(4096, 4096, 4096)


def _space():
    return LibrarySpace(verifier=FakeVerifier())


def test_values_are_what_knobs_to_config_accepts():
    values = _space().values(TASK)
    for name, fixed in gemm_configs.FIXED_KNOBS.items():
        assert values[name] == (fixed,)
    assert set(values["split_k"]) == set(gemm_configs.SPLITS) & set(
        KNOB_BY_NAME["split_k"].values)
    assert values["epilogue"] == tuple(e for e in gemm_configs.EPILOGUES)
    assert values["BM"] == gemm_configs.BMS and values["consumers"] == (1, 2)
    assert values["cluster_m"] == gemm_configs.CLUSTERS_M
    # x @ W: B's K x N tile in whole 32-byte swizzle rows, so multiples of 16
    assert values["BN"] == tuple(range(16, 257, 16))
    assert values["BK"] == (64, 128)


def test_the_space_follows_changes_to_gemm_configs(monkeypatch):
    monkeypatch.setitem(gemm_configs.FIXED_KNOBS, "raster", "n")
    monkeypatch.setattr(gemm_configs, "SPLITS", (1, 2))
    monkeypatch.setattr(gemm_configs, "EPILOGUES", ("direct",))
    monkeypatch.setattr(gemm_configs, "CLUSTERS_M", (1,))
    values = _space().values(TASK)
    assert values["raster"] == ("n",) and values["split_k"] == (1, 2)
    assert values["epilogue"] == ("direct",) and values["cluster_m"] == (1,)


def test_a_knob_the_library_learns_enters_the_space(monkeypatch):
    # e.g. the library learns clusters along N: knobs_to_config starts accepting cluster_n=2
    original = gemm_configs.knobs_to_config
    assert gemm_configs.FIXED_KNOBS["cluster_n"] == 1
    monkeypatch.delitem(gemm_configs.FIXED_KNOBS, "cluster_n")

    def learns_clusters(knobs, layout, m, n, k):
        knobs = dict(knobs)
        cluster = knobs.pop("cluster_n", 1)
        cfg = original(knobs, layout, m, n, k)
        if cluster not in (1, 2):
            raise LaunchError(f"cluster_n={cluster} (1 or 2)")
        return {**cfg, "CN": cluster} if cluster > 1 else cfg

    monkeypatch.setattr(gemm_configs, "knobs_to_config", learns_clusters)
    space = _space()
    assert space.values(TASK)["cluster_n"] == (1, 2)
    one = replace(space.smallest_valid(TASK), BN=128, stages=4)
    two = replace(one, cluster_n=2)
    assert space.accepts(two, TASK)
    assert space.specialisation(one, TASK) != space.specialisation(two, TASK)


def test_a_knob_table_the_library_does_not_meet_is_named(monkeypatch):
    monkeypatch.setattr(gemm_configs, "BMS", (96,))             # not a value of the table
    with pytest.raises(SpaceError, match="accepts no value of BM"):
        _space().values(TASK)


def test_specialisations_are_exactly_what_matmul_builds(monkeypatch):
    torch = pytest.importorskip("torch")
    matmul_module = importlib.import_module("argus.ops.matmul")   # the module, not the function

    built = []

    def fake_library_kernel(module, name, **overrides):
        built.append((module, name, overrides))
        return lambda *args: None

    monkeypatch.setattr(matmul_module, "library_kernel", fake_library_kernel)
    space, task = _space(), GemmTask(256, 512, 256)
    a = torch.zeros(256, 256, dtype=torch.bfloat16)
    b = torch.zeros(256, 512, dtype=torch.bfloat16)
    configs = list(space.all_accepted(task))
    assert len(configs) > 100
    # every 19th accepted configuration (~320 of the ~6100: every value of every knob is
    # among them; ~0.06 s each on the 2-core machine)
    for cfg in configs[::19]:
        built.clear()
        matmul_module.matmul(a, b, out=torch.empty(256, 512, dtype=torch.bfloat16),
                             **cfg.to_json())
        (module, name, overrides), *rest = built
        # split-K: the GEMM, then the kernel that rounds its workspace into C
        assert rest == ([("gemm_splitk", "splitk_round", {"DT": overrides["DT"]})]
                        if module == "gemm_splitk" else [])
        expected = (module, name, kernel_constants(module, name, overrides))
        assert space.specialisation(cfg, task) == expected, cfg.short()


def test_one_configuration_per_kernel():
    space = _space()
    base = replace(space.smallest_valid(TASK), BM=128, consumers=2, BN=128, stages=4)
    split = [space.canonical(replace(base, split_k=2, group=g), TASK) for g in (1, 4, 16)]
    assert len({c.key() for c in split}) == 1                # split-K ignores the raster group
    grouped = [space.canonical(replace(base, group=g), TASK) for g in (1, 4, 16)]
    assert len({c.key() for c in grouped}) == 3
    keys = [c.key() for c in space.all_accepted(TASK)]
    specs = [space.specialisation(c, TASK) for c in space.all_accepted(TASK)]
    assert len(keys) == len(set(keys)) == len(set(specs))


def test_refusals_carry_the_librarys_message():
    space = _space()
    too_deep = replace(space.smallest_valid(TASK), BN=256, BK=128, stages=4)
    assert "227 KB" in space.refusal(too_deep, TASK)
    assert space.why_invalid(too_deep, TASK)[0] == "refused"
    assert "raster='n'" in space.refusal(GemmConfig(), TASK)   # gemm_config.SMALLEST
    tma_split = replace(space.smallest_valid(TASK), split_k=2, epilogue="smem_tma")
    assert "split_k" in space.refusal(tma_split, TASK)


@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (256, 8192, 8192), (128, 4096, 4096)])
def test_the_shape_tables_choice_is_found(shape):
    task = GemmTask(*shape)
    space = _space()
    cfg = space.table_config(task)
    table = gemm_configs.config_for(*shape, "kn")
    assert cfg.BN == table["BN"] and cfg.stages == table["S"]
    assert space.accepts(cfg, task)


def test_smallest_valid_with_the_real_verifier():
    """Every knob at its smallest admissible value, except the ring: one stage is accepted
    by argus.ops.matmul but the verifier proves it frees a stage a wgmma still reads."""
    space = LibrarySpace()
    cfg = space.smallest_valid(TASK)
    assert (cfg.BM, cfg.consumers, cfg.BN, cfg.BK, cfg.stages, cfg.group, cfg.cluster_m,
            cfg.split_k, cfg.epilogue) == (64, 1, 16, 64, 2, 1, 1, 1, "direct")
    one_stage = replace(cfg, stages=1)
    assert space.accepts(one_stage, TASK)
    why, errors = space.why_invalid(one_stage, TASK)
    assert why == "unverified" and "stage-reuse" in errors[0]
    assert space.verifier.runs <= 4                # the level walk stops at the first proof


def test_a_missing_verifier_pass_is_an_error_not_a_pass(monkeypatch):
    import argus.agent.library_verifier as lv

    monkeypatch.setattr(lv, "verify_spec", lambda spec: {"errors": [], "missing": ["protocol"],
                                                          "seconds": 0.0})
    with pytest.raises(VerifierMissing, match="z3-solver"):
        LibraryVerifier().errors(("gemm", "gemm_nn", (("S", 2),)))


def test_prefetch_gives_the_same_answers_as_in_process():
    specs = [LibrarySpace(verifier=FakeVerifier()).specialisation(
        replace(GemmConfig(BM=128, consumers=2, warp_specialized=True, raster="m",
                           persistent=True), stages=s), TASK) for s in (1, 2)]
    pooled = LibraryVerifier(workers=2)
    try:
        pooled.prefetch(specs)
        answers = [bool(pooled.errors(s)) for s in specs]
    finally:
        pooled.close()
    assert answers == [True, False]
    assert pooled.stats()["specialisations"] == 2
