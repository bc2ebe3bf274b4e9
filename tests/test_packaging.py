"""What the README tells users to install exists as an extra of the package."""

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent


def test_every_module_the_readme_imports_is_a_dependency_or_in_a_named_extra():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    readme = (REPO / "README.md").read_text()
    # Modules a README snippet imports that are not ours or the standard library's.
    imported = set(re.findall(r"^\s*(?:from|import) ([a-z_]+)", readme, flags=re.M)) - {"ibnetsim"}
    imported = {m for m in imported if m not in sys.stdlib_module_names}
    requirement = lambda r: re.split(r"[\[<>=; ]", r, maxsplit=1)[0].lower().replace("-", "_")
    base = {requirement(r) for r in project["dependencies"]}
    for module in imported:
        if module in base:
            continue
        holders = [name for name, reqs in extras.items() if module in {requirement(r) for r in reqs}]
        assert holders, f"the README imports {module}, which no dependency or extra provides"
        assert any(f".[{h}]" in readme for h in holders), f"the README imports {module} but never says to install .[{holders[0]}]"
    assert "dask_jobqueue" in imported
