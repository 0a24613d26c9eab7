"""`argus check`: clean examples exit 0 and report what ran; a bug exits 1 with file:line,
a counterexample and a hint; --json follows the argus.check/1 schema of
docs/design/verifier.md; --draw outlines the offending thread; DSL errors exit 2."""

import json
from pathlib import Path

import pytest

from argus.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BUGS = EXAMPLES / "bugs" / "gemm"

BAD_NAME = '''\
from argus.lang import Tensor, fp32, kernel, load, store, tile


@kernel(grid=(1,), block=128)
def bad(X: Tensor[64, 64, fp32], Y: Tensor[64, 64, fp32]):
    x = load(tile(X, (64, 64), (0, 0)), "blocked")
    store(tile(Y, (64, 64), (0, 0)), undefined_name)
'''


@pytest.mark.parametrize("name", ["copy", "gemm", "flash_attention"])
def test_clean_examples_are_verified(name, capsys):
    assert main(["check", str(EXAMPLES / f"{name}.py")]) == 0
    out = capsys.readouterr().out
    assert ": verified (tags" in out and "0 error(s), 0 warning(s)" in out
    assert "NOT verified yet" not in out


UNMODELLED = '''\
from argus.lang import Tensor, cluster_rank, fp32, kernel, load, store, tile


@kernel(grid=(2,), block=128, cluster=(2, 1, 1))
def pair(X: Tensor[128, 64, fp32], Y: Tensor[128, 64, fp32]):
    r = cluster_rank()
    x = load(tile(X, (64, 64), (r, 0)), "blocked")
    store(tile(Y, (64, 64), (r, 0)), x)
'''


def test_a_kernel_with_unmodelled_ops_is_not_called_verified(capsys, tmp_path):
    path = tmp_path / "pair.py"    # each block's rows are its rank: block_x % 2, a store
    path.write_text(UNMODELLED)    # destination whose coverage is not proved (a warning)
    code = main(["check", str(path)])
    out = capsys.readouterr().out
    assert "warning:" in out and "[tag.store-coverage]" in out
    assert ": verified (" not in out and ": UNVERIFIED (" in out
    assert code == 3               # no error, but not everything is proved


def test_accept_unverified_exits_0_and_still_says_unverified(capsys, tmp_path):
    path = tmp_path / "pair.py"
    path.write_text(UNMODELLED)
    assert main(["check", str(path), "--accept-unverified"]) == 0
    out = capsys.readouterr().out
    assert ": UNVERIFIED (" in out and "accepted with --accept-unverified" in out
    assert main(["check", str(path), "--json", "--accept-unverified"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "unverified" and report["ok"] is False
    assert report["accepted_unverified"] is True
    (k,) = report["kernels"]
    assert k["verdict"] == "unverified" and k["ok"] is False and k["unverified_reasons"]
    assert any(f["unverified"] for f in k["findings"])


def test_unverified_json_and_exit_3(capsys, tmp_path):
    path = tmp_path / "pair.py"
    path.write_text(UNMODELLED)
    assert main(["check", str(path), "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "unverified" and report["ok"] is False
    assert report["accepted_unverified"] is False


COMPARISON_EXTENT = (EXAMPLES / "gemm.py").read_text().replace(
    'schedule(M // BM, N // BN, order="grouped", group=8)',
    'schedule(M // BM, N >= BN, order="grouped", group=8)')


def test_passes_that_crash_on_a_kernel_make_it_unverified_not_clean(capsys, tmp_path):
    """A schedule extent written as a comparison crashed every pass: exit 0 before."""
    path = tmp_path / "cmp.py"
    path.write_text(COMPARISON_EXTENT)
    assert "N >= BN" in COMPARISON_EXTENT
    assert main(["check", str(path)]) == 3
    out = capsys.readouterr().out
    assert "internal-error]" in out and ": UNVERIFIED (" in out and "Traceback" not in out


def test_a_vacuous_kernel_fails_at_its_line(capsys):
    bug = EXAMPLES / "bugs" / "vacuity" / "kt_remainder.py"
    assert main(["check", str(bug)]) == 1
    out = capsys.readouterr().out
    assert f"{bug}:44:" in out and "[vacuity.loop]" in out and "FAILED" in out


def test_a_bug_exits_1_with_line_counterexample_and_hint(capsys):
    assert main(["check", str(BUGS / "wrong_stage.py")]) == 1
    out = capsys.readouterr().out
    assert f"{BUGS / 'wrong_stage.py'}:60:" in out and "[tag.stage]" in out
    assert "iteration: i=0" in out and "barrier full[0]" in out and "hint:" in out
    assert "FAILED" in out and "Traceback" not in out


def test_json_schema(capsys):
    assert main(["check", f"{BUGS / 'swapped_major.py'}::gemm", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["schema"] == "argus.check/1" and report["ok"] is False
    (k,) = report["kernels"]
    assert k["name"] == "gemm" and k["errors"] >= 1 and "tags" in k["passes"]
    f = next(x for x in k["findings"] if x["check"] == "tag.wgmma-k")
    assert set(f) >= {"check", "severity", "message", "location", "op", "hint", "counterexample"}
    assert f["location"]["line"] == 60 and f["op"] == "wgmma"
    cex = f["counterexample"]
    assert cex["iteration"]["tn"] == 1 and cex["thread"] == 128 and cex["register"] == 0
    assert cex["layout"] == "wgmma_acc_m64n64" and cex["cell"] == [0, 0]
    assert cex["block"] == [1]        # the block that visits tile (0, 1)
    assert cex["elements"][0]["actual"]["a.k"] != cex["elements"][0]["actual"]["b.k"]


def test_json_clean(capsys):
    assert main(["check", f"{EXAMPLES / 'gemm.py'}::gemm", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True and report["kernels"][0]["findings"] == []
    assert report["verdict"] == "verified" and report["kernels"][0]["verdict"] == "verified"


def test_draw_outlines_the_offending_thread(tmp_path, capsys):
    out = tmp_path / "cex.svg"
    assert main(["check", str(BUGS / "swapped_major.py"), "--draw", str(out)]) == 1
    svg = out.read_text()
    assert svg.startswith("<svg") or "<svg" in svg[:200]
    assert "#e00000" in svg and "thread 128" in svg


def test_draw_bad_suffix_exits_2(capsys):
    assert main(["check", str(EXAMPLES / "gemm.py"), "--draw", "x.gif"]) == 2
    assert "OUT.svg" in capsys.readouterr().err


def test_unknown_name_exits_2_naming_file_and_line(tmp_path, capsys):
    path = tmp_path / "bad.py"
    path.write_text(BAD_NAME)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:7:" in err and "undefined_name" in err
    assert "Traceback" not in err


def test_unknown_kernel_exits_2(capsys):
    assert main(["check", f"{EXAMPLES / 'copy.py'}::gemm"]) == 2
    assert "kernels defined there: copy" in capsys.readouterr().err
