"""A labelled fixture for `engramory verify`: a real git repository of made-up components
with scripted history (renames, a rename chain, deletions, functions moved between files,
functions removed, lockfiles bumped and trimmed, npm scripts, make targets and just recipes
removed, tests removed), a work tree with untracked, ignored and extensionless files, a
rename staged but not committed and one made by `mv` alone; and a store of notes whose every
anchor carries the verdict it must get (fresh, stale, moved with its candidate,
unverifiable). Prose that only looks like code (Node.js, and/or, "make sure", e.g., 3.14,
user@example.com) is written between them and must get no verdict at all.

`build(tmp, notes=300)` writes both and returns the labels; the bench reuses it.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Tuple

WORDS = ("billing auth search cart orders users mailer payments reports inventory shipping catalog reviews "
         "ledger audit gateway metrics alerts export importer scheduler webhooks profile sessions tokens "
         "uploads media pricing coupons tax").split()
GIT_ENV = {"GIT_AUTHOR_NAME": "fixture", "GIT_AUTHOR_EMAIL": "f@x.invalid", "GIT_COMMITTER_NAME": "fixture",
           "GIT_COMMITTER_EMAIL": "f@x.invalid", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
PROSE = [
    "Node.js and Vue.js drive the front end; the client/server split is old.",
    "Make sure the build is green, e.g. before lunch, i.e. at 11 a.m. sharp.",
    "Ask user@example.com about TCP/IP and/or the 3.14 release of the API.",
    "We ship v1.2.3 to staging first; the README explains why.",
    "Read docs.rs for the crate docs and keep the PR small (under 400 lines).",
    "The team prefers squash merges and short-lived branches like feature/login.",
]


class Label(NamedTuple):
    note: str
    line: int
    kind: str
    text: str
    verdict: str
    candidate: Optional[str]
    bare: bool = False


class Fixture(NamedTuple):
    repo: Path
    store: Path
    labels: List[Label]
    commits: Dict[str, str]


def git(repo: Path, *args: str) -> str:
    env = dict(os.environ, **GIT_ENV)
    env.pop("GIT_DIR", None)
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def service_py(c: str, with_report: bool = True, with_handle: bool = True) -> str:
    out = ["import os", "", ""]
    if with_handle:
        out += ["def handle_%s(request):" % c, "    return os.environ.get('%s')" % c.upper(), "", ""]
    out += ["class %sClient:" % c.capitalize(), "    def fetch_%s(self):" % c, "        return None", "", ""]
    if with_report:
        out += ["def render_%s_report(rows):" % c, "    return '\\n'.join(rows)", "", ""]
    out += ["def helper_%s_%d(x):" % (c, i) + "\n    return x + %d\n\n" % i for i in range(6)]
    return "\n".join(out)


def tests_py(c: str, with_edge: bool = True) -> str:
    out = ["def test_%s_ok():\n    assert True\n" % c]
    if with_edge:
        out.append("def test_%s_edge():\n    assert True\n" % c)
    return "\n\n".join(out)


LOCKED_NPM = {"lodash": "4.17.21", "react": "18.2.0", "express": "4.18.2", "axios": "1.6.0", "chalk": "5.3.0"}
LOCKED_PY = {"requests": "2.31.0", "Django": "4.2.7", "pydantic": "2.5.0", "httpx": "0.25.2"}


def package_lock(pkgs: Dict[str, str]) -> str:
    packages = {"": {"name": "fixture", "version": "1.0.0"}}
    packages.update({"node_modules/%s" % n: {"version": v} for n, v in pkgs.items()})
    return json.dumps({"name": "fixture", "lockfileVersion": 3, "packages": packages}, indent=2)


def uv_lock(pkgs: Dict[str, str]) -> str:
    return "version = 1\n\n" + "".join('[[package]]\nname = "%s"\nversion = "%s"\nsource = { registry = "x" }\n'
                                       'dependencies = [\n    { name = "idna" },\n]\n\n' % (n.lower(), v)
                                       for n, v in pkgs.items())


def build(tmp: Path, notes: int = 300, seed: int = 0, comps: int = len(WORDS)) -> Fixture:
    rnd = random.Random(seed)
    repo, store = tmp / "repo", tmp / "mem"
    repo.mkdir(parents=True)
    store.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    names = WORDS[:comps]
    scripts = {"build": "tsc", "test": "jest", "lint": "eslint .", "e2e": "playwright test", "release": "x"}
    scripts.update({"%s:start" % c: "node %s" % c for c in names})
    targets = ["deploy", "test", "clean", "lint", "docs", "bench"] + ["%s-up" % c for c in names]
    for c in names:
        write(repo / "src" / c / ("%s_service.py" % c), service_py(c))
        write(repo / "scripts" / ("%s_deploy.sh" % c), "#!/bin/sh\necho deploy %s\n" % c)
        write(repo / "tests" / ("test_%s.py" % c), tests_py(c))
        write(repo / "docs" / ("%s.md" % c), "# %s\n\nAbout %s.\n" % (c, c))
        write(repo / "config" / ("%s.yaml" % c), "name: %s\nreplicas: 2\n" % c)
        write(repo / "bin" / ("%s-tool" % c), "#!/bin/sh\necho %s\n" % c)
        write(repo / "tools" / c / "__init__.py", "")
        write(repo / "tools" / c / "__main__.py", "print('%s')\n" % c)
    write(repo / "package.json", json.dumps({"name": "fixture", "scripts": scripts}, indent=2))
    write(repo / "Makefile", "".join("%s:\n\t@echo %s\n" % (t, t) for t in targets) + ".PHONY: %s\n" % " ".join(targets))
    write(repo / "justfile", "lint:\n    ruff .\n\nfmt:\n    ruff format .\n\nserve port='8000':\n    echo {{port}}\n")
    write(repo / "package-lock.json", package_lock(LOCKED_NPM))
    write(repo / "uv.lock", uv_lock(LOCKED_PY))
    write(repo / "requirements.txt", "flask==3.0.0\nclick>=8\n")
    write(repo / "Cargo.lock", 'version = 3\n\n[[package]]\nname = "serde"\nversion = "1.0.193"\n\n'
                               '[[package]]\nname = "tokio"\nversion = "1.35.0"\n')
    write(repo / "go.sum", "github.com/pkg/errors v0.9.1 h1:x=\ngithub.com/pkg/errors v0.9.1/go.mod h1:y=\n")
    for name in ("Dockerfile", "Containerfile"):
        write(repo / name, "FROM scratch\n")
    write(repo / "LICENSE", "MIT\n")
    write(repo / "README.md", "# fixture\n")
    write(repo / ".gitignore", "build/\n*.generated.json\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    first = git(repo, "rev-parse", "HEAD").strip()

    # the history every label below is about
    fate: Dict[str, Dict[str, str]] = {c: {} for c in names}
    for i, c in enumerate(names):
        if i % 4 == 0:
            (repo / "ops").mkdir(exist_ok=True)
            git(repo, "mv", "scripts/%s_deploy.sh" % c, "ops/%s_deploy.sh" % c)
            fate[c]["deploy"] = "ops/%s_deploy.sh" % c
        if i % 5 == 1:
            git(repo, "mv", "src/%s/%s_service.py" % (c, c), "src/%s/%s_core.py" % (c, c))
            fate[c]["service"] = "src/%s/%s_core.py" % (c, c)
        if i % 3 == 2:
            git(repo, "rm", "-q", "docs/%s.md" % c, "config/%s.yaml" % c)
            fate[c]["docs"] = "deleted"
        service = repo / (fate[c].get("service") or "src/%s/%s_service.py" % (c, c))
        if i % 4 == 1:
            service.write_text(service_py(c, with_report=False), encoding="utf-8")
            write(repo / "src" / c / "reports.py", "def render_%s_report(rows):\n    return rows\n" % c)
            fate[c]["report"] = "src/%s/reports.py" % c
        if i % 6 == 3:
            service.write_text(service_py(c, with_handle=False, with_report="report" not in fate[c]), encoding="utf-8")
            fate[c]["handle"] = "removed"
        if i % 4 == 2:
            write(repo / "tests" / ("test_%s.py" % c), tests_py(c, with_edge=False))
            fate[c]["edge"] = "removed"
        if i % 5 == 3:
            git(repo, "rm", "-q", "-r", "tools/%s" % c)
            fate[c]["tool"] = "deleted"
    npm = dict(LOCKED_NPM, lodash="4.18.1")
    del npm["axios"]
    py = dict(LOCKED_PY, requests="2.32.3")
    del py["Django"]
    write(repo / "package-lock.json", package_lock(npm))
    write(repo / "uv.lock", uv_lock(py))
    gone_scripts = {"e2e"} | {"%s:start" % c for i, c in enumerate(names) if i % 3 == 0}
    write(repo / "package.json", json.dumps({"name": "fixture", "scripts": {
        k: v for k, v in scripts.items() if k not in gone_scripts}}, indent=2))
    gone_targets = {"bench"} | {"%s-up" % c for i, c in enumerate(names) if i % 3 == 1}
    kept_targets = [t for t in targets if t not in gone_targets]
    write(repo / "Makefile", "".join("%s:\n\t@echo %s\n" % (t, t) for t in kept_targets) + ".PHONY: %s\n" % " ".join(kept_targets))
    write(repo / "justfile", "lint:\n    ruff .\n\nserve port='8000':\n    echo {{port}}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "second: renames, deletions, moved functions, lockfile bumps")
    second = git(repo, "rev-parse", "HEAD").strip()
    chain = names[4]  # ops/<c>_deploy.sh renamed once more: scripts/ -> ops/ -> deploy/
    (repo / "deploy").mkdir()
    git(repo, "mv", fate[chain]["deploy"], "deploy/%s_deploy.sh" % chain)
    fate[chain]["deploy"] = "deploy/%s_deploy.sh" % chain
    git(repo, "commit", "-qm", "third: a rename chain")
    third = git(repo, "rev-parse", "HEAD").strip()

    # the work tree: untracked, ignored, a staged rename, a rename by mv alone
    for c in names:
        write(repo / "notes" / ("scratch_%s.py" % c), "x = 1\n")
        write(repo / "build" / "deep" / ("generated_%s.py" % c), "y = 2\n")
    write(repo / "report.generated.json", "{}\n")
    write(repo / "tools" / "untracked-tool", "#!/bin/sh\n")
    staged, by_mv = names[2], names[6]
    git(repo, "mv", "bin/%s-tool" % staged, "bin/%s-cli" % staged)
    fate[staged]["bin"] = "bin/%s-cli" % staged
    os.rename(repo / "bin" / ("%s-tool" % by_mv), repo / "bin" / ("%s-cli" % by_mv))
    fate[by_mv]["bin"] = "gone"

    short = {"second": second[:7], "third": third[:7]}
    labels = write_notes(store, names, fate, notes, rnd, {"first": first, "second": second, "third": third})
    return Fixture(repo, store, labels, short)


def anchors_for(c: str, i: int, fate: Dict[str, str], commits: Dict[str, str]) -> List[Tuple[str, str, str, str, Optional[str], bool]]:
    """(sentence with one anchor, kind, anchor text, verdict, candidate, bare) for component `c`."""
    service = "src/%s/%s_service.py" % (c, c)
    out = []
    deploy = "scripts/%s_deploy.sh" % c
    if "deploy" in fate:
        out.append(("The deploy script is `%s`." % deploy, "path", deploy, "moved", fate["deploy"], False))
        out.append(("Run %s_deploy.sh to ship it." % c, "path", "%s_deploy.sh" % c, "fresh", None, True))
    else:
        out.append(("The deploy script is `%s`." % deploy, "path", deploy, "fresh", None, False))
    if "service" in fate:
        out.append(("The service lives in %s." % service, "path", service, "moved", fate["service"], False))
        out.append(("Start from `%s_service.py`." % c, "path", "%s_service.py" % c, "moved", fate["service"], True))
    else:
        out.append(("The service lives in %s." % service, "path", service, "fresh", None, False))
        out.append(("Start from `%s_service.py`." % c, "path", "%s_service.py" % c, "fresh", None, True))
        out.append(("Its client is at `%s:7`." % service, "line", "%s:7" % service, "fresh", None, False))
        out.append(("The old hook was `%s#L400-L410`." % service, "line", "%s#L400-L410" % service, "stale", None, False))
    verdict = "stale" if fate.get("docs") else "fresh"
    out.append(("Background: docs/%s.md." % c, "path", "docs/%s.md" % c, verdict, None, False))
    out.append(("Settings in `config/%s.yaml`." % c, "path", "config/%s.yaml" % c, verdict, None, False))
    out.append(("Or just %s.yaml when in doubt." % c, "path", "%s.yaml" % c, verdict, None, True))
    out.append(("The %s.md page says more." % c, "path", "%s.md" % c, verdict, None, True))
    if "report" in fate:
        src = (fate.get("service") or service)
        out.append(("Reports: `%s::render_%s_report`." % (src, c), "symbol", "%s::render_%s_report" % (src, c), "moved",
                    "%s::render_%s_report" % (fate["report"], c), False))
    out.append(("Call `render_%s_report()` for the PDF." % c, "symbol", "render_%s_report()" % c, "fresh", None, False))
    handle = "stale" if fate.get("handle") else "fresh"
    out.append(("Requests go through `handle_%s()`." % c, "symbol", "handle_%s()" % c, handle, None, False))
    out.append(("Never call `%s.fetch_%s()` twice." % (c.capitalize() + "Client", c), "symbol",
                "%sClient.fetch_%s()" % (c.capitalize(), c), "fresh", None, False))
    edge = "stale" if fate.get("edge") else "fresh"
    out.append(("Check with `pytest tests/test_%s.py::test_%s_edge`." % (c, c), "command",
                "pytest tests/test_%s.py::test_%s_edge" % (c, c), edge, None, False))
    tool = "stale" if fate.get("tool") else "fresh"
    out.append(("Or `python -m tools.%s` locally." % c, "command", "python -m tools.%s" % c, tool, None, False))
    start = "stale" if i % 3 == 0 else "fresh"
    out.append(("Boot it with `npm run %s:start`." % c, "command", "npm run %s:start" % c, start, None, False))
    up = "stale" if i % 3 == 1 else "fresh"
    out.append(("Bring it up with `make %s-up`." % c, "command", "make %s-up" % c, up, None, False))
    out.append(("The wrapper is bin/%s-tool." % c, "path", "bin/%s-tool" % c,
                "moved" if fate.get("bin", "").startswith("bin/") else "stale" if fate.get("bin") else "fresh",
                fate.get("bin") if fate.get("bin", "").startswith("bin/") else None, False))
    out.append(("Scratch work is in `notes/scratch_%s.py`." % c, "path", "notes/scratch_%s.py" % c, "fresh", None, False))
    out.append(("Generated code: build/deep/generated_%s.py." % c, "path", "build/deep/generated_%s.py" % c, "fresh", None, False))
    out.append(("Look for `generated_%s.py` if the build broke." % c, "path", "generated_%s.py" % c, "fresh", None, True))
    return out


COMMON: List[Tuple[str, str, str, str, Optional[str], bool]] = [
    ("Build with `npm run build`.", "command", "npm run build", "fresh", None, False),
    ("The `npm run e2e` suite was dropped.", "command", "npm run e2e", "stale", None, False),
    ("Deploy with `make deploy`.", "command", "make deploy", "fresh", None, False),
    ("Benchmarks: `make bench`.", "command", "make bench", "stale", None, False),
    ("Lint with `just lint`.", "command", "just lint", "fresh", None, False),
    ("Format with `just fmt`.", "command", "just fmt", "stale", None, False),
    ("We pin lodash@4.17.21 for now.", "package", "lodash@4.17.21", "stale", None, False),
    ("Upgraded to `lodash@4.18`.", "package", "lodash@4.18", "fresh", None, False),
    ("HTTP calls use `axios@1.6.0`.", "package", "axios@1.6.0", "stale", None, False),
    ("Python side: `requests==2.32.3`.", "package", "requests==2.32.3", "fresh", None, False),
    ("The admin ran on `Django==4.2.7`.", "package", "Django==4.2.7", "stale", None, False),
    ("The UI uses React 18.2 everywhere.", "package", "React 18.2", "fresh", None, False),
    ("Rust side: serde@1.0 for JSON.", "package", "serde@1.0", "fresh", None, False),
    ("Errors wrap github.com/pkg/errors@v0.9.1 in Go.", "package", "github.com/pkg/errors@v0.9.1", "fresh", None, False),
    ("The container builds from the Containerfile.", "path", "Containerfile", "fresh", None, True),
    ("Local images use the Dockerfile.", "path", "Dockerfile", "fresh", None, True),
    ("See `LICENSE` before copying.", "path", "LICENSE", "fresh", None, True),
    ("All targets are in the Makefile.", "path", "Makefile", "fresh", None, True),
    ("Untracked helper: `tools/untracked-tool`.", "path", "tools/untracked-tool", "fresh", None, False),
    ("Build output lands in report.generated.json.", "path", "report.generated.json", "fresh", None, True),
    ("See https://example.com/runbook for the pager.", "path", "https://example.com/runbook", "unverifiable", None, False),
    ("Hosts are in /etc/hosts on the box.", "path", "/etc/hosts", "unverifiable", None, False),
    ("Start the stack with `docker compose up`.", "command", "docker compose up", "unverifiable", None, False),
    ("The bad deploy was `deadbee1`.", "commit", "deadbee1", "stale", None, False),
]


# One note naming a file of every kind that exists on disk: none of them may come out stale.
EXISTING: List[Tuple[str, str, str, str, Optional[str], bool]] = [
    ("Tracked: `src/billing/billing_service.py`.", "path", "src/billing/billing_service.py", "fresh", None, False),
    ("Untracked: `tools/untracked-tool`.", "path", "tools/untracked-tool", "fresh", None, False),
    ("Ignored: build/deep/generated_billing.py.", "path", "build/deep/generated_billing.py", "fresh", None, False),
    ("Ignored, by name: `generated_auth.py`.", "path", "generated_auth.py", "fresh", None, True),
    ("Ignored at the top: report.generated.json.", "path", "report.generated.json", "fresh", None, True),
    ("Extensionless: bin/billing-tool.", "path", "bin/billing-tool", "fresh", None, False),
    ("Extensionless, by name: the Containerfile and `LICENSE`.", "path", "Containerfile", "fresh", None, True),
    ("Untracked, by name: `scratch_cart.py`.", "path", "scratch_cart.py", "fresh", None, True),
    ("A dotfile: `.gitignore`.", "path", ".gitignore", "fresh", None, True),
]


def write_notes(store: Path, names: List[str], fates: Dict[str, Dict[str, str]], count: int, rnd: random.Random,
                commits: Dict[str, str]) -> List[Label]:
    labels: List[Label] = []
    index = ["# Memory Index", "", "## project"]
    pools = {c: anchors_for(c, i, fates[c], commits) for i, c in enumerate(names)}
    common = COMMON + [("The rename landed in `%s`." % commits["second"][:8], "commit", commits["second"][:8], "fresh", None, False),
                       ("First import: `%s`." % commits["first"][:12], "commit", commits["first"][:12], "fresh", None, False)]
    for n in range(count):
        c = names[n % len(names)]
        pool = pools[c] + common
        picked = rnd.sample(pool, k=min(len(pool), rnd.randint(1, 5))) if n < count - 1 else EXISTING
        slug = "note-%03d-%s" % (n, c) if n < count - 1 else "note-every-kind-of-file"
        head = ["---", "name: %s" % slug, "description: What we know about %s, part %d" % (c, n), "type: project",
                "created: 2026-01-01", "updated: 2026-01-01", "---"]
        body: List[str] = []
        for sentence, kind, text, verdict, candidate, bare in picked:
            if rnd.random() < 0.5:
                body.append(rnd.choice(PROSE))
            line = len(head) + len(body) + 1
            if kind == "command" and rnd.random() < 0.2:  # some commands in a fenced block
                body += ["```sh", "$ " + text, "```"]
                line += 1
            else:
                body.append(sentence)
            labels.append(Label(slug + ".md", line, kind, text, verdict, candidate, bare))
        body += ["", "**Why:** it broke once.", "**How to apply:** check it first."]
        write(store / (slug + ".md"), "\n".join(head + body) + "\n")
        index.append("- [%s](%s.md) \u2014 %s, part %d" % (c, slug, c, n))
    write(store / "MEMORY.md", "\n".join(index) + "\n")
    return labels


NOTE_HEAD = "---\nname: %s\ndescription: %s\ntype: project\ncreated: 2026-01-01\nupdated: 2026-01-01\n---\n"


def note(store: Path, slug: str, body: str, description: str = "What the deploy needs") -> Path:
    """A protocol note `slug.md` with `body` (line 8 onwards), and its pointer in MEMORY.md."""
    path = store / (slug + ".md")
    write(path, NOTE_HEAD % (slug, description) + body + "\n\n**Why:** it broke once.\n**How to apply:** check first.\n")
    index = store / "MEMORY.md"
    old = index.read_text(encoding="utf-8") if index.exists() else "# Memory Index\n\n## project\n"
    if "(%s.md)" % slug not in old:
        index.write_text(old + "- [%s](%s.md) \u2014 %s\n" % (slug, slug, description), encoding="utf-8")
    return path


def tiny(tmp: Path) -> Tuple[Path, Path, str]:
    """(repo, store, short id of the rename commit): scripts/deploy.sh renamed to ops/deploy.py,
    src/app.py of 30 lines, a Makefile with `deploy`; the store has no notes yet."""
    repo, store = tmp / "repo", tmp / "mem"
    store.mkdir(parents=True)
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    write(repo / "scripts" / "deploy.sh", "#!/bin/sh\necho deploy\n" * 3)
    write(repo / "src" / "app.py", "".join("line_%02d = %d\n" % (i, i) for i in range(1, 31)))
    write(repo / "Makefile", "deploy:\n\t@echo deploy\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    (repo / "ops").mkdir()
    git(repo, "mv", "scripts/deploy.sh", "ops/deploy.py")
    git(repo, "commit", "-qm", "move the deploy script")
    return repo, store, git(repo, "rev-parse", "--short=7", "HEAD").strip()
