"""scripts/build-pgo, the optional profile-guided build.

Run with stand-ins for rustup, rustc, llvm-profdata and Python (pip, maturin,
the training run) that log their arguments and the build environment: the
steps, their order, and that the optimised build uses the profile the
instrumented build's training run wrote. (The real builds take minutes;
crates/sim/README.md gives what one measured.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HOST = "x86_64-unknown-linux-gnu"


def run_build_pgo(tmp: Path, *args: str, tools_installed: bool, rustup: bool = True) -> tuple[subprocess.CompletedProcess, list[str]]:
    bindir, sysroot, log = tmp / "bin", tmp / "sysroot", tmp / "calls.log"
    bindir.mkdir()
    log.write_text("")
    profdata = sysroot / "lib" / "rustlib" / HOST / "bin" / "llvm-profdata"
    profdata.parent.mkdir(parents=True)
    for tool in ("bash", "dirname", "sed", "mktemp", "ls", "rm", "mkdir", "chmod"):
        (bindir / tool).symlink_to(shutil.which(tool))
    profdata_body = f'#!/bin/sh\necho "llvm-profdata $*" >> "{log}"\n[ "$1 $2" = "merge -o" ] && : > "$3"\n'
    stubs = {
        "rustc": f'case "$*" in "-vV") echo "host: {HOST}";; "--print sysroot") echo "{sysroot}";; esac\n',
        "python3": (
            f'echo "python $* | RUSTFLAGS=${{RUSTFLAGS:-}} | CARGO_TARGET_DIR=${{CARGO_TARGET_DIR:-}}" >> "{log}"\n'
            'if [ "$1 $2 $3" = "-m maturin build" ]; then\n'
            '  while [ $# -gt 0 ]; do [ "$1" = --out ] && { mkdir -p "$2"; : > "$2/ibnetsim-0.1.0-cp39-abi3-linux_x86_64.whl"; }; shift; done\n'
            "fi\n"
        ),
    }
    if rustup:
        stubs["rustup"] = (
            f'echo "rustup $*" >> "{log}"\n'
            f'[ "$*" = "component add llvm-tools" ] && {{ printf %s \'{profdata_body}\' > "{profdata}"; chmod +x "{profdata}"; }}\n'
        )
    for name, body in stubs.items():
        (bindir / name).write_text("#!/bin/sh\n" + body)
        (bindir / name).chmod(0o755)
    if tools_installed:
        profdata.write_text(profdata_body)
        profdata.chmod(0o755)
    env = {"PATH": str(bindir), "HOME": str(tmp), "PYTHON": str(bindir / "python3")}
    proc = subprocess.run([str(REPO / "scripts" / "build-pgo"), *args], env=env, capture_output=True, text=True, timeout=60)
    return proc, log.read_text().splitlines()


def test_instrumented_build_training_merge_then_the_build_that_uses_the_profile(tmp_path):
    proc, calls = run_build_pgo(tmp_path, tools_installed=True)
    assert proc.returncode == 0, proc.stderr
    assert not [c for c in calls if c.startswith("rustup")], "llvm-tools was there already"
    builds = [c for c in calls if c.startswith("python -m maturin build")]
    assert len(builds) == 2
    generate = builds[0].split("-Cprofile-generate=")[1].split()[0]
    use = builds[1].split("-Cprofile-use=")[1].split()[0]
    assert "CARGO_TARGET_DIR=target/pgo-generate" in builds[0] and "CARGO_TARGET_DIR=target/pgo-use" in builds[1]
    assert "--release" in builds[0] and "--release" in builds[1]
    merge = next(c for c in calls if c.startswith("llvm-profdata"))
    assert merge == f"llvm-profdata merge -o {use} {generate}"
    # In order: instrumented build and its install, the training run, the
    # merge, the optimised build and its install (over the instrumented one).
    bench = next(i for i, c in enumerate(calls) if c.startswith("python -m ibnetsim.cli bench --quick"))
    order = [calls.index(builds[0]), bench, calls.index(merge), calls.index(builds[1])]
    assert order == sorted(order)
    installs = [c for c in calls if c.startswith("python -m pip install --quiet --no-deps --force-reinstall")]
    assert "/instrumented/" in installs[0] and "/optimised/" in installs[-1]
    assert calls.index(installs[0]) < bench < calls.index(builds[1]) < calls.index(installs[-1])
    assert "installed the PGO build into" in proc.stderr


def test_llvm_tools_are_added_when_missing(tmp_path):
    proc, calls = run_build_pgo(tmp_path, tools_installed=False)
    assert proc.returncode == 0, proc.stderr
    assert calls[0] == "rustup component add llvm-tools"
    assert "adding rustup's llvm-tools component" in proc.stderr


def test_without_rustup_it_says_what_to_do_and_builds_nothing(tmp_path):
    proc, calls = run_build_pgo(tmp_path, tools_installed=False, rustup=False)
    assert proc.returncode == 2
    assert "rustup not found" in proc.stderr and "pip install ." in proc.stderr
    assert not [c for c in calls if "maturin" in c]


def test_an_unknown_argument_is_refused_and_help_describes_the_steps(tmp_path):
    proc, calls = run_build_pgo(tmp_path, "--fast", tools_installed=True)
    assert proc.returncode == 2 and "unknown argument '--fast'" in proc.stderr
    assert calls == []
    env = {**os.environ}
    help_ = subprocess.run([str(REPO / "scripts" / "build-pgo"), "--help"], env=env, capture_output=True, text=True, timeout=60)
    assert help_.returncode == 0
    assert "profile-guided optimisation" in help_.stdout and "ibnetsim bench --quick" in help_.stdout
