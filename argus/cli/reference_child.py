"""The isolated child that runs a kernel file's reference (argus/cli/reference_sandbox.py
starts it): `python -I reference_child.py JOB_DIR`.

It imports nothing of Argus and is started in isolated mode (-I: no PYTHON* variables, no
user site, not even its own folder on sys.path), in an empty job folder as its working
directory, with a bare environment and resource limits. It reads the job (job.json,
inputs.npz), opens its result file, and only then runs the user's code, under an audit
hook that refuses what a reference has no business doing: opening a file for writing,
reading outside the Python installation and the job folder, starting processes,
sockets, loading native libraries, changing the file system. Results go back as
result.npz (arrays) and one JSON line on stdout.

The audit hook is a guard rail, not a security boundary by itself: the boundary is that
this process holds nothing of the harness (no timers, no oracle, no outputs of the kernel
under test) and that the parent reads back only arrays and one JSON line.
"""
from __future__ import annotations

import json
import os
import sys
import traceback

import numpy as np

_BLOCKED_EVENTS = (
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
    "subprocess.Popen", "pty.spawn", "socket.connect", "socket.bind", "socket.sendto",
    "socket.getaddrinfo", "ctypes.dlopen", "ctypes.dlsym", "ctypes.call_function",
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.link",
    "os.symlink", "os.truncate", "os.utime", "os.kill", "os.killpg", "os.putenv",
    "os.unsetenv", "shutil.rmtree", "shutil.copyfile", "shutil.move", "webbrowser.open", "urllib.Request",
)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class Refused(PermissionError):
    """An operation the sandbox refuses (reported to the user as such); an OSError, so code
    that copes with an unreadable file (linecache, warnings) copes with it too."""


def install_guard(job_dir: str) -> None:
    roots = tuple(os.path.realpath(p) + os.sep for p in
                  {sys.prefix, sys.base_prefix, sys.exec_prefix, job_dir,
                   os.path.dirname(os.path.dirname(np.__file__))})

    def guard(event, args):
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            if isinstance(mode, str) and any(c in mode for c in "wax+"):
                raise Refused(f"the reference may not write files (open {path!r}, {mode!r})")
            if isinstance(flags, int) and flags & _WRITE_FLAGS:
                raise Refused(f"the reference may not write files (open {path!r})")
            if isinstance(path, (str, bytes)):
                real = os.path.realpath(os.fsdecode(path))
                if not (real + os.sep).startswith(roots):
                    raise Refused(f"the reference may not read {real}")
        elif event.startswith(_BLOCKED_EVENTS):
            raise Refused(f"the reference may not do {event}")

    sys.addaudithook(guard)


def user_error(err: BaseException, filename: str) -> dict:
    """The error and the deepest line of the user's file in its traceback."""
    stack = traceback.StackSummary.extract(traceback.walk_tb(err.__traceback__),
                                           lookup_lines=False)   # no source read under the guard
    frames = [f for f in stack if f.filename == filename]
    line = frames[-1].lineno if frames else None
    return {"ok": False, "error": f"{type(err).__name__}: {err}"[:2000], "line": line}


def run(job_dir: str) -> dict:
    with open(os.path.join(job_dir, "job.json"), encoding="utf-8") as f:
        job = json.load(f)
    with np.load(os.path.join(job_dir, "inputs.npz")) as data:
        arrays = {k: data[k] for k in data.files}
    result_file = open(os.path.join(job_dir, "result.npz"), "wb")   # before the guard
    filename = job["filename"]
    namespace = {"__name__": "argus_reference", "__file__": filename, "__builtins__": __builtins__}
    install_guard(job_dir)
    try:
        namespace.update(job["constants"])
        exec(compile(job["source"], filename, "exec"), namespace)
        out, reply = {}, {"ok": True}
        if job["step"] == "inputs":
            rng = np.random.Generator(np.random.PCG64())
            rng.bit_generator.state = job["rng_state"]
            made = dict(namespace["inputs"](rng, dict(job["symbols"])))
            out = {f"in_{k}": np.asarray(v) for k, v in made.items()}
            reply.update(made=list(made), rng_state=rng.bit_generator.state)
        else:
            got = namespace[job["function"]](*(arrays[n] for n in job["args"]), **job["keywords"])
            got = got if isinstance(got, tuple) else (got,)
            out = {f"out{i}": np.asarray(g, np.float64) for i, g in enumerate(got)}
            reply.update(outputs=len(got))
    except BaseException as err:  # the user's code failed, was refused or called exit()
        return user_error(err, filename)
    np.savez(result_file, **out)
    result_file.close()
    return reply


def main() -> None:
    try:
        reply = run(sys.argv[1])
    except Exception as err:  # the job itself could not be read: a bug of the parent
        reply = {"ok": False, "error": f"sandbox: {type(err).__name__}: {err}", "line": None}
    sys.stdout.write("\n" + json.dumps(reply) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
