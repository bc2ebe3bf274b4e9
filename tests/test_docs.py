"""Every shell command and Python snippet in README.md and docs/*.md, run as written.

Fenced blocks marked ``sh``, ``bash`` or ``console`` (the lines after a ``$``
prompt) run with ``bash -e``; ``python`` blocks run in one Python session per
document, so a later snippet sees the names an earlier one defined. The blocks
of one document run in document order in one fresh temporary directory that
holds a copy of ``examples/`` — what a reader who has just cloned the
repository sees — so a file an earlier block writes is there for the later
ones. ``ibnetsim``, ``python`` and ``python3`` resolve to the package and
interpreter this test runs with. Output listings use ``text``, file contents
``toml``, ``csv`` or ``ini``; those are not run. A fence without a language, or
with one not named here, is an error, so no command can hide in one.

An HTML comment on the line before a fence changes how the block is run:

* ``<!-- doctest: skip — REASON -->``: not run (installs, needs a cluster,
  runs for many minutes, ...). Each document's skips are counted against
  ``SKIPS`` below, so a new one is a deliberate change of this file.
* ``<!-- doctest: slow -->``: runs only when ``IBNETSIM_DOCTEST_SLOW=1``
  (docs/testing.md).
* ``<!-- doctest: exit N -->``: every command exits 0 except the last, which
  must exit with status N (``ibnetsim check`` reporting a defect).

A shown block whose first line is ``# examples/FILE`` must be that file (TOML:
the same data; other files: the same lines after their opening comments).
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import ibnetsim

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

SHELL = {"sh", "bash", "console"}
PYTHON = {"python"}
# Languages that are shown, not run: output listings, file contents.
SHOWN = {"text", "toml", "csv", "ini"}

# Blocks each document skips (no `slow` ones: those are counted apart). A new
# skip must be added here, so none slips in unnoticed.
SKIPS = {
    "README.md": 4,
    "docs/martinez2003.md": 1,
    "docs/switch.md": 2,
    "docs/testing.md": 2,
}

SLOW_ENV = "IBNETSIM_DOCTEST_SLOW"
# Not a timing assertion: a bound on a hung block, far above any block's run time.
HANG_S = 300

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MARKER = re.compile(r"^\s*<!--\s*doctest:\s*(?P<body>.*?)\s*-->\s*$")


@dataclass
class Block:
    doc: str  # path relative to the repository
    line: int  # line of the opening fence, 1-based
    lang: str
    code: str
    first_code_line: int
    directive: str = ""  # "", "skip", "slow" or "exit"
    reason: str = ""
    exit_status: int = 0

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def runnable(self) -> bool:
        return self.lang in SHELL or self.lang in PYTHON


@dataclass
class Parsed:
    blocks: list[Block] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def parse(rel: str, text: str) -> Parsed:
    """The fenced blocks of a markdown file (`rel`, its text), with their doctest markers."""
    lines = text.splitlines()
    out = Parsed()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and m["fence"][0] == "`" and "`" in m["info"]:
            m = None  # inline code at the start of a line, not a fence (CommonMark)
        if not m:
            mk = MARKER.match(lines[i])
            nxt = FENCE.match(lines[i + 1]) if mk and i + 1 < len(lines) else None
            if mk and not nxt:
                out.errors.append(f"{rel}:{i + 1}: doctest marker not right before a fence")
            i += 1
            continue
        indent, fence, info = m["indent"], m["fence"], m["info"].strip()
        lang = info.split()[0].lower() if info else ""
        start = i
        body = []
        i += 1
        while i < len(lines):
            c = FENCE.match(lines[i])
            if c and c["fence"][0] == fence[0] and len(c["fence"]) >= len(fence) and not c["info"].strip():
                break
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        else:
            out.errors.append(f"{rel}:{start + 1}: fence never closed")
        i += 1
        block = Block(rel, start + 1, lang, "\n".join(body) + "\n", start + 2)
        if not lang:
            out.errors.append(f"{rel}:{start + 1}: fence without a language (use `text` for output)")
        elif not block.runnable and lang not in SHOWN:
            out.errors.append(f"{rel}:{start + 1}: unknown fence language {lang!r}")
        mk = MARKER.match(lines[start - 1]) if start > 0 else None
        if mk:
            body_txt = mk["body"]
            word = body_txt.split()[0] if body_txt.split() else ""
            if not block.runnable:
                out.errors.append(f"{rel}:{start}: doctest marker on a {lang or 'plain'} block, which is never run")
            elif word == "skip":
                block.directive = "skip"
                block.reason = body_txt[len("skip"):].strip(" —–-:")
                if not block.reason:
                    out.errors.append(f"{rel}:{start}: a skip needs a reason")
            elif word == "slow":
                block.directive = "slow"
            elif word == "exit" and re.fullmatch(r"exit\s+\d+", body_txt):
                if lang not in SHELL:
                    out.errors.append(f"{rel}:{start}: `exit N` applies to shell blocks")
                block.directive = "exit"
                block.exit_status = int(body_txt.split()[1])
            else:
                out.errors.append(f"{rel}:{start}: unknown doctest marker {body_txt!r}")
        out.blocks.append(block)
    return out


def shell_script(block: Block) -> str:
    """The block as a bash script; `console` blocks keep only their `$ ` lines."""
    code = block.code
    if block.lang == "console":
        code = "".join(l[2:] + "\n" for l in code.splitlines() if l.startswith("$ "))
    if block.directive != "exit":
        return code
    # All commands but the last must succeed; the last must exit with N.
    lines = code.rstrip("\n").split("\n")
    k = len(lines) - 1
    while k > 0 and (not lines[k].strip() or lines[k].lstrip().startswith("#")):
        k -= 1
    while k > 0 and lines[k - 1].rstrip().endswith("\\"):
        k -= 1
    head, last = "\n".join(lines[:k]), "\n".join(lines[k:])
    n = block.exit_status
    return (
        f"{head}\nset +e\n{last}\nrc=$?\n"
        f'if [ "$rc" -ne {n} ]; then echo "doctest: the last command exited $rc, expected {n}" >&2; exit 97; fi\n'
        "exit 0\n"
    )


# The Python session of one document: runs the blocks it is sent, one by one,
# in one namespace. Requests and replies are JSON lines on a private pipe; the
# blocks' own output goes to stderr (collected in a file).
DRIVER = r"""
import json, os, sys, traceback
proto = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
ns = {"__name__": "__main__"}
for req in sys.stdin:
    req = json.loads(req)
    try:
        exec(compile("\n" * (req["line"] - 1) + req["code"], req["file"], "exec"), ns)
        reply = {"ok": True}
    except BaseException:
        reply = {"ok": False, "traceback": traceback.format_exc()}
    sys.stdout.flush()
    sys.stderr.flush()
    proto.write(json.dumps(reply) + "\n")
    proto.flush()
"""


class Session:
    def __init__(self, cwd: Path, env: dict[str, str]):
        self.log = cwd / ".python-session.log"
        self._logf = open(self.log, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", DRIVER], cwd=cwd, env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._logf,
        )

    def run(self, block: Block) -> str | None:
        """None when the block ran; otherwise what went wrong."""
        start = self.log.stat().st_size
        req = {"file": block.doc, "line": block.first_code_line, "code": block.code}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], HANG_S)
        if not ready:
            self.proc.kill()
            return f"no answer after {HANG_S} s (hung?)"
        line = self.proc.stdout.readline()
        if not line:
            return f"the Python session died (exit {self.proc.wait()})\n" + self._output(start)
        reply = json.loads(line)
        if reply["ok"]:
            return None
        return reply["traceback"] + self._output(start)

    def _output(self, start: int) -> str:
        self._logf.flush()
        with open(self.log, "rb") as f:
            f.seek(start)
            text = f.read().decode(errors="replace")
        return "output:\n" + tail(text) if text.strip() else ""

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._logf.close()


def tail(text: str, n: int = 40) -> str:
    lines = text.rstrip().splitlines()
    return "\n".join(lines[-n:]) + "\n"


def reader_env(tmp: Path) -> dict[str, str]:
    """The environment of a reader's shell: `ibnetsim` and `python` are ours."""
    bindir = tmp / ".doctest-bin"
    bindir.mkdir()
    shims = {
        "ibnetsim": f'exec "{sys.executable}" -m ibnetsim.cli "$@"\n',
        "python": f'exec "{sys.executable}" "$@"\n',
        "python3": f'exec "{sys.executable}" "$@"\n',
    }
    for name, body in shims.items():
        p = bindir / name
        p.write_text("#!/bin/sh\n" + body)
        p.chmod(0o755)
    pkg_root = str(Path(ibnetsim.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(bindir), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(p for p in [pkg_root, env.get("PYTHONPATH", "")] if p)
    env["MPLBACKEND"] = "Agg"
    return env


PARSED = {p.relative_to(REPO).as_posix(): parse(p.relative_to(REPO).as_posix(), p.read_text(encoding="utf-8")) for p in DOCS}
WITH_BLOCKS = [d for d, p in PARSED.items() if any(b.runnable and b.directive != "skip" for b in p.blocks)]


def test_every_fence_is_named_and_every_marker_understood():
    errors = [e for p in PARSED.values() for e in p.errors]
    assert not errors, "\n".join(errors)


def test_skip_counts_are_the_expected_ones():
    found = {d: sum(b.directive == "skip" for b in p.blocks) for d, p in PARSED.items()}
    assert {d: n for d, n in found.items() if n} == SKIPS


@pytest.mark.parametrize("doc", WITH_BLOCKS)
def test_doc_blocks_run(doc, tmp_path):
    blocks = [b for b in PARSED[doc].blocks if b.runnable]
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    env = reader_env(tmp_path)
    run_slow = os.environ.get(SLOW_ENV) == "1"
    failures, ran, skipped, slow, times = [], 0, [], 0, []
    session = None
    try:
        for b in blocks:
            if b.directive == "skip":
                skipped.append(f"{b.where}: {b.reason}")
                continue
            if b.directive == "slow" and not run_slow:
                slow += 1
                continue
            ran += 1
            t0 = time.monotonic()
            if b.lang in PYTHON:
                session = session or Session(tmp_path, env)
                err = session.run(b)
            else:
                proc = subprocess.run(
                    ["bash", "-e", "-c", shell_script(b)], cwd=tmp_path, env=env,
                    stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=HANG_S,
                )
                err = None if proc.returncode == 0 else (
                    f"exit status {proc.returncode}\n" + tail(proc.stdout + proc.stderr))
            times.append(f"{b.where}: {time.monotonic() - t0:.1f} s")
            if err:
                failures.append(f"{b.where} ({b.lang}) failed:\n{err}")
    finally:
        if session:
            session.close()
    print(f"{doc}: {ran} blocks ran, {len(skipped)} skipped, {slow} slow not run")
    for s in skipped:
        print(f"  skipped {s}")
    for t in times:  # for whoever keeps the test fast; nothing depends on them
        print(f"  ran {t}")
    assert not failures, "\n\n".join(failures)
    if not ran:
        pytest.skip(f"{doc} has only slow blocks ({SLOW_ENV}=1 runs them)")


def shown_example(block: Block) -> str | None:
    """The examples/ file a shown block says it is (its first line `# examples/FILE`)."""
    m = re.fullmatch(r"#\s*(examples/[\w./-]+)\s*", block.code.split("\n", 1)[0])
    return m[1] if m and not block.runnable else None


def test_example_files_shown_in_docs_are_the_shipped_ones():
    shown = [(b, name) for p in PARSED.values() for b in p.blocks if (name := shown_example(b))]
    assert {name for _, name in shown} >= {"examples/updn-vs-minhop.toml", "examples/qos-requests.csv"}
    for b, name in shown:
        text = (REPO / name).read_text()
        if b.lang == "toml":
            assert tomllib.loads(b.code) == tomllib.loads(text), f"{b.where} differs from {name}"
        else:
            # The file may open with comment lines that the block leaves out.
            lines = text.splitlines()
            while lines and lines[0].startswith("#"):
                lines.pop(0)
            assert b.code.splitlines()[1:] == lines, f"{b.where} differs from {name}"



# ------------------------------------------- the harness itself, on made-up documents

SAMPLE = """\
Intro.

```sh
echo one
```

<!-- doctest: skip — needs a cluster -->
```python
import dask_jobqueue
```

* a list item:

  <!-- doctest: exit 1 -->
  ```bash
  true
  ibnetsim check x.net   # exit 1
  ```

<!-- doctest: slow -->
````console
$ echo two
two
````

```text
$ not run
```
"""


def test_parse_finds_languages_lines_markers_and_indented_fences():
    p = parse("s.md", SAMPLE)
    assert p.errors == []
    got = [(b.line, b.lang, b.directive, b.reason, b.exit_status, b.first_code_line) for b in p.blocks]
    assert got == [
        (3, "sh", "", "", 0, 4),
        (8, "python", "skip", "needs a cluster", 0, 9),
        (15, "bash", "exit", "", 1, 16),
        (21, "console", "slow", "", 0, 22),
        (26, "text", "", "", 0, 27),
    ]
    assert p.blocks[2].code == "true\nibnetsim check x.net   # exit 1\n"
    assert shell_script(p.blocks[3]) == "echo two\n"


def test_inline_code_at_the_start_of_a_line_is_not_a_fence():
    p = parse("s.md", "Blocks fenced\n```sh``` or\n```` ```bash ```` run.\n")
    assert (p.blocks, p.errors) == ([], [])


@pytest.mark.parametrize(
    "text, error",
    [
        ("```\nls\n```\n", "s.md:1: fence without a language"),
        ("```shell-session\nls\n```\n", "s.md:1: unknown fence language 'shell-session'"),
        ("<!-- doctest: skip -->\n```sh\nls\n```\n", "s.md:1: a skip needs a reason"),
        ("<!-- doctest: later -->\n```sh\nls\n```\n", "s.md:1: unknown doctest marker 'later'"),
        ("<!-- doctest: slow -->\n```text\nls\n```\n", "s.md:1: doctest marker on a text block"),
        ("<!-- doctest: exit 1 -->\n```python\npass\n```\n", "s.md:1: `exit N` applies to shell blocks"),
        ("<!-- doctest: slow -->\n\n```sh\nls\n```\n", "s.md:1: doctest marker not right before a fence"),
        ("```sh\nls\n", "s.md:1: fence never closed"),
    ],
)
def test_parse_refuses_what_it_cannot_run_knowingly(text, error):
    errors = parse("s.md", text).errors
    assert any(e.startswith(error) for e in errors), errors


@pytest.mark.parametrize(
    "code, status",
    [
        ("true\n(exit 1)   # the defect\n", 0),  # as documented
        ("true\n(exit 2)\n", 97),  # the last command exits otherwise
        ("(exit 1)\ntrue\n", 1),  # an earlier command fails: bash -e stops there
        ("(exit 1)\n(exit 1)\n", 1),  # ... even when the last one would have been right
        ("true\n(exit 1) \\\n  && true\n\n# done\n", 0),  # a continued last command, then a comment
    ],
)
def test_an_exit_marker_holds_only_the_last_command_to_its_status(code, status):
    b = Block("s.md", 1, "sh", code, 2, directive="exit", exit_status=1)
    proc = subprocess.run(["bash", "-e", "-c", shell_script(b)], capture_output=True, text=True)
    assert proc.returncode == status, proc.stderr


def test_python_blocks_share_one_session_and_failures_name_the_document_line(tmp_path):
    s = Session(tmp_path, dict(os.environ))
    try:
        assert s.run(Block("s.md", 9, "python", "a = 41\nprint('hello')\n", 10)) is None
        err = s.run(Block("s.md", 19, "python", "b = a + 1\nraise ValueError(b)\n", 20))
    finally:
        s.close()
    assert 'File "s.md", line 21' in err and "ValueError: 42" in err


# ------------------------------------------- scripts/test, the README's install-and-test command
#
# Run with stand-ins for pip, pytest, cargo and apt-get that only log their
# arguments, on a PATH without Chromium: what it says, and in which order.


def base_python() -> str | None:
    """An interpreter outside any virtual environment, if this machine has one."""
    v = sys.version_info
    for c in (getattr(sys, "_base_executable", None), f"{sys.base_prefix}/bin/python{v.major}.{v.minor}"):
        if c and os.path.exists(c):
            out = subprocess.run([c, "-c", "import sys; print(sys.prefix == sys.base_prefix)"], capture_output=True, text=True)
            if out.stdout.strip() == "True":
                return c
    return None


def run_scripts_test(tmp: Path, python: str, **env_extra) -> tuple[subprocess.CompletedProcess, list[str]]:
    bindir = tmp / "bin"
    bindir.mkdir(exist_ok=True)
    log = tmp / "calls.log"
    log.write_text("")
    for tool in ("bash", "dirname"):
        (bindir / tool).unlink(missing_ok=True)
        (bindir / tool).symlink_to(shutil.which(tool))
    stubs = {
        "python3": f'case "$1 $2" in "-m pip"|"-m pytest") echo "python $*" >> "{log}"; exit 0;; esac\nexec "{python}" "$@"\n',
        "cargo": f'echo "cargo $*" >> "{log}"\n',
        "apt-get": f'echo "apt-get $*" >> "{log}"; echo "STUB apt-get $*" >&2\n',
    }
    for name, body in stubs.items():
        (bindir / name).write_text("#!/bin/sh\n" + body)
        (bindir / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA", "VIRTUAL_ENV", "IBNETSIM_TEST"))}
    env.update(PATH=str(bindir), PYTHON=str(bindir / "python3"), **env_extra)
    proc = subprocess.run([str(REPO / "scripts" / "test")], env=env, capture_output=True, text=True, timeout=120)
    return proc, log.read_text().splitlines()


def test_scripts_test_warns_outside_a_virtual_environment_and_names_what_it_installs(tmp_path):
    python = base_python()
    if python is None:
        pytest.skip("no Python outside a virtual environment on this machine")
    proc, calls = run_scripts_test(tmp_path, python)
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    real = subprocess.run([python, "-c", "import sys; print(sys.executable, sys.prefix)"], capture_output=True, text=True).stdout.split()
    assert f"scripts/test: Python: {real[0]} (Python " in err
    assert f"WARNING: {real[0]} is not in a virtual environment" in err and f"into {real[1]}" in err
    src = re.search(r"installing ibnetsim\[test\] from (\S+) ", err)
    assert src and Path(src[1]).resolve() == REPO
    assert calls[:2] == ["python -m pip install --quiet --upgrade pip", "python -m pip install --quiet .[test]"]
    assert calls[-2:] == ["cargo test --workspace", "python -m pytest -q"]
    # The apt package is named before apt-get runs.
    said = err.index("installing the system package 'chromium' with apt-get")
    assert said < err.index("STUB apt-get update") < err.index("STUB apt-get install -y -qq chromium")
    # So are OpenSM's, after Chromium's and before the tests.
    said = err.index("installing the system packages 'opensm ibsim-utils infiniband-diags' with apt-get")
    assert err.index("STUB apt-get install -y -qq chromium") < said < err.index("STUB apt-get install -y -qq opensm ibsim-utils infiniband-diags")
    assert calls.index("apt-get install -y -qq opensm ibsim-utils infiniband-diags") < calls.index("cargo test --workspace")


def test_scripts_test_in_a_virtual_environment_says_so_and_can_leave_apt_alone(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    proc, calls = run_scripts_test(tmp_path, str(venv / "bin" / "python"), IBNETSIM_TEST_NO_APT="1")
    assert proc.returncode == 0, proc.stderr
    assert f"installing into the virtual environment {venv}" in proc.stderr
    assert "WARNING" not in proc.stderr
    assert "IBNETSIM_TEST_NO_APT=1, so not installing it" in proc.stderr
    assert "IBNETSIM_TEST_NO_APT=1, so not installing them: the live OpenSM test will be skipped" in proc.stderr
    assert not [c for c in calls if c.startswith("apt-get")]
    assert "python -m pip install --quiet .[test]" in calls
