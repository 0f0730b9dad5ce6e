"""The base of every real-CLI host driver: one test's HOME, the folder engramory and the CLI run
in, the environment, `engramory install/--check/uninstall` as a user types them, the installed
bundle (to break it on purpose), and one headless session against a scripted loopback model.

A host's driver is a subclass that declares only what is its own: where its pinned CLI lives,
the command line of a headless run, the config a run needs, and how its file tools are called.
`fixtures(HostClass)` gives a suite's conftest its two fixtures. Standard library and pytest.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable, ClassVar, Dict, List, Optional, Sequence, Tuple

import common
import pytest
from mock_openai import MockModel

Call = Tuple[str, Dict[str, Any]]


class Host:
    # -- what a subclass declares ----------------------------------------------------------------
    name: ClassVar[str]  # engramory's --host
    title: ClassVar[str]  # how messages name the CLI
    here: ClassVar[Path]  # the suite folder: package.json, node_modules, ci-install.sh
    package: ClassVar[str]  # the pinned npm package in package.json
    installed_package: ClassVar[str] = ""  # the package whose package.json holds the installed version (default: package)
    required: ClassVar[Tuple[str, ...]] = ()  # files (relative to `here`) the suite needs; the first is the CLI
    scope: ClassVar[Tuple[str, ...]] = ("--scope", "project")
    project_dir: ClassVar[str] = "project"
    timeout: ClassVar[float] = 120
    core_module: ClassVar[str] = ""  # a module every hook run imports (default engramory/hosts/<name>/__init__.py)

    # -- the pin -----------------------------------------------------------------------------------

    @classmethod
    def version(cls) -> str:
        """The version package.json pins."""
        return str(json.loads((cls.here / "package.json").read_text(encoding="utf-8"))["dependencies"][cls.package])

    @classmethod
    def cli(cls) -> Path:
        return cls.here / cls.required[0]

    @classmethod
    def suite(cls) -> str:
        """The suite's folder as the repository names it (tests/hosts/qwen), for messages."""
        tests = Path(__file__).resolve().parents[1]
        try:
            return "tests/" + cls.here.resolve().relative_to(tests).as_posix()
        except ValueError:
            return "tests/" + cls.here.name

    @classmethod
    def missing(cls) -> Optional[str]:
        """Why the suite cannot run here, or None."""
        if not all((cls.here / rel).exists() for rel in cls.required):
            return "%s is not installed in %s: run `bash %s/ci-install.sh`" % (cls.title, cls.suite(), cls.suite())
        return None

    @classmethod
    def installed_version(cls) -> str:
        pkg = cls.here / "node_modules" / (cls.installed_package or cls.package) / "package.json"
        return str(json.loads(pkg.read_text(encoding="utf-8"))["version"])

    # -- one test's host -------------------------------------------------------------------------

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.home = tmp / "home"
        self.project = tmp / self.project_dir
        self.project.mkdir(parents=True)
        self.env = common.base_env(self.home)
        self._traces = 0
        self.setup()

    def setup(self) -> None:
        """The host's own HOME and project set-up (settings, folders, environment)."""

    @property
    def bundle(self) -> Path:
        """Where `engramory install` copies the runtime."""
        raise NotImplementedError

    @property
    def hook_script(self) -> str:
        """The bundle's hook entry script, relative to the bundle."""
        return "hooks/engramory_%s_hook.py" % self.name

    @property
    def crash_module(self) -> str:
        """A bundle module every hook run imports, relative to the bundle."""
        return self.core_module or "engramory/hosts/%s/__init__.py" % self.name

    # -- engramory as a user runs it ---------------------------------------------------------------

    def engramory(self, *args: str) -> subprocess.CompletedProcess[str]:
        return common.engramory(list(args), self.project, self.home, self.env)

    def install(self, *extra: str, first_run: bool = True) -> str:
        done = self.engramory("install", "--host", self.name, *self.scope, *extra)
        assert done.returncode == 0, done.stderr + done.stdout
        if first_run:
            self.first_run()
        return str(done.stdout)

    def first_run(self) -> None:
        """What the host would set up on its own at its first run after an install (see opencode)."""

    def check(self) -> subprocess.CompletedProcess[str]:
        return self.engramory("install", "--host", self.name, *self.scope, "--check")

    def check_passes(self) -> str:
        done = self.check()
        assert done.returncode == 0, done.stdout + done.stderr
        return str(done.stdout)

    def check_fails(self) -> str:
        """`install --check` on a broken install: exit 1, and what it says."""
        done = self.check()
        assert done.returncode == 1, done.stdout + done.stderr
        return str(done.stdout)

    def uninstall(self) -> str:
        done = self.engramory("uninstall", "--host", self.name, *self.scope)
        assert done.returncode == 0, done.stderr + done.stdout
        return str(done.stdout)

    def replace_installed(self, rel: str, text: str) -> None:
        """Overwrite one file of the installed bundle (and drop its stale bytecode)."""
        path = self.bundle / rel
        assert path.is_file(), "%s is not in the installed bundle" % rel
        path.write_text(text, encoding="utf-8")
        cache = path.parent / "__pycache__"
        if cache.exists():
            shutil.rmtree(cache)

    def trace_file(self) -> Path:
        """A fresh ENGRAMORY_TRACE_FILE path for one run."""
        self._traces += 1
        return self.tmp / ("trace.jsonl" if self._traces == 1 else "trace-%d.jsonl" % self._traces)

    # -- one headless session ----------------------------------------------------------------------

    def argv(self, mock: Any) -> List[str]:
        """The command line of one headless run against `mock`."""
        raise NotImplementedError

    def wire_env(self, mock: Any) -> Dict[str, str]:
        """Environment that points the CLI at `mock` (under the test's own variables)."""
        return {}

    def prepare(self, mock: Any, env: Dict[str, str]) -> None:
        """Config the run needs that names `mock` (written after it has its port)."""

    def cleanup(self) -> None:
        """After every run, even a failed one."""

    def run(self, script: Sequence[Any], timeout: Optional[float] = None, model: str = "mock-model",
            **env: str) -> Tuple[common.Run, MockModel]:
        """One headless session whose model follows `script` (see mock_openai)."""
        return self.session(MockModel(script, model=model), timeout, **env)

    def session(self, server: Any, timeout: Optional[float] = None, **env: str) -> Tuple[common.Run, Any]:
        """One headless session against `server` (any loopback model); the CLI must finish in
        `timeout` seconds and the model must have seen no request it could not answer."""
        timeout = self.timeout if timeout is None else timeout
        try:
            with server as mock:
                full = dict(self.env)
                full.update(self.wire_env(mock))
                full.update(env)
                self.prepare(mock, full)
                result = common.run(self.argv(mock), self.project, full, timeout)
        finally:
            self.cleanup()
        assert not result.timed_out, "%s did not finish in %s s: %s" % (self.title, timeout, result.stderr[-2000:])
        assert not server.errors, server.errors
        return result, server

    def assert_completed(self, result: common.Run) -> None:
        """The run ended as a finished session (not a crash, not an error)."""
        assert result.returncode == 0, result.stderr[-2000:] + result.stdout[-2000:]

    # -- the host's file tools, as the model calls them --------------------------------------------

    def write_call(self, path: str, content: str) -> Call:
        """The call that writes a whole file."""
        raise NotImplementedError


def require_cli(cls: type[Host]) -> Path:
    """The host's pinned CLI: skip (fail under ENGRAMORY_REQUIRE_E2E) when it is not installed,
    fail when the installed one is not the pinned version."""
    common.require(cls.missing())
    installed, pinned = cls.installed_version(), cls.version()
    assert installed == pinned, "%s has %s %s installed, package.json pins %s: run `bash %s/ci-install.sh`" % (
        cls.suite(), cls.title, installed, pinned, cls.suite())
    return cls.cli()


def fixtures(cls: type[Host]) -> Tuple[Callable[..., Any], Callable[..., Any]]:
    """A suite's two fixtures: `<name>_cli` (session: skips, or fails under
    ENGRAMORY_REQUIRE_E2E, when the CLI is missing; fails when it is not the pinned version) and
    `<name>` (one test's host in tmp_path). In conftest: `qwen_cli, qwen = fixtures(Qwen)`."""

    @pytest.fixture(scope="session", name=cls.name + "_cli")
    def cli_fixture() -> Path:
        return require_cli(cls)

    @pytest.fixture(name=cls.name)
    def host_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Host:
        request.getfixturevalue(cls.name + "_cli")
        return cls(tmp_path)

    return cli_fixture, host_fixture
