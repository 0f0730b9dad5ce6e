"""Anchors read from a note: what counts, what does not, and on which line."""

from __future__ import annotations

import pytest

from engramory.verify.extract import extract


def kinds(text: str, skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    return [(a.kind, a.text) for a in extract(text, skip)]


NOTE = """---
name: deploy
description: The deploy script is scripts/deploy.sh
type: project
created: 2026-01-01
updated: 2026-01-01
---
Run `ops/run.sh` first.

```sh
$ make release && npm test
```
"""


def test_line_numbers_are_the_note_files_own_frontmatter_counted() -> None:
    found = [(a.line, a.text) for a in extract(NOTE)]
    assert found == [(3, "scripts/deploy.sh"), (8, "ops/run.sh"), (11, "make release"), (11, "npm test")]


@pytest.mark.parametrize(("text", "expected"), [
    ("The script is `scripts/deploy.sh`.", [("path", "scripts/deploy.sh")]),
    ("Run deploy.sh to ship.", [("path", "deploy.sh")]),
    ("The Containerfile and the Dockerfile and the Makefile's targets.",
     [("path", "Containerfile"), ("path", "Dockerfile"), ("path", "Makefile")]),
    ("`LICENSE` and `README`", [("path", "LICENSE"), ("path", "README")]),
    ("See src/app.py:12 and `src/a.py:10-20` and src/b.py#L5-L9.",
     [("line", "src/app.py:12"), ("line", "src/a.py:10-20"), ("line", "src/b.py#L5-L9")]),
    ("Call `render_invoice()`, `billing.render(x, y)` or `billing/invoice.py::render_invoice`.",
     [("symbol", "render_invoice()"), ("symbol", "billing.render(x, y)"), ("symbol", "billing/invoice.py::render_invoice")]),
    ("`def render_invoice` and `class InvoiceRenderer`", [("symbol", "def render_invoice"), ("symbol", "class InvoiceRenderer")]),
    ("We pin lodash@4.17.21, `requests==2.31.0` and `@types/node@20.1`; the app uses Django 4.2.",
     [("package", "lodash@4.17.21"), ("package", "requests==2.31.0"), ("package", "@types/node@20.1"),
      ("package", "Django 4.2")]),
    ("Run `npm run build`, `make deploy test`, `just lint`, `python -m tools.migrate --dry`.",
     [("command", "npm run build"), ("command", "make deploy"), ("command", "make test"), ("command", "just lint"),
      ("command", "python -m tools.migrate")]),
    ("`pytest tests/test_api.py::test_login[case-1]`", [("command", "pytest tests/test_api.py::test_login")]),
    ("`make -C services/api migrate` and `uv run pytest tests/x.py`",
     [("command", "make migrate"), ("command", "pytest tests/x.py")]),
    ("Commit `a1b2c3d` fixed it.", [("commit", "a1b2c3d")]),
    ("See https://example.com/x and /etc/hosts and ~/.claude/x.json.",
     [("path", "https://example.com/x"), ("path", "/etc/hosts"), ("path", "~/.claude/x.json")]),
    ("`docker compose up`", [("command", "docker compose up")]),
    ("a [link](docs/setup.md) and ![img](assets/logo.png)", [("path", "docs/setup.md"), ("path", "assets/logo.png")]),
    ("`bash scripts/x.sh --fast` and `./bin/tool`", [("path", "scripts/x.sh"), ("path", "./bin/tool")]),
    ("the `src/` folder", [("path", "src/")]),
])
def test_what_is_an_anchor(text: str, expected: list[tuple[str, str]]) -> None:
    assert sorted(kinds(text)) == sorted(expected)


@pytest.mark.parametrize("text", [
    "Node.js and Vue.js drive the front end; the client/server split is old.",
    "Make sure the build is green, e.g. before lunch, i.e. at 11 a.m. sharp.",
    "Ask user@example.com about TCP/IP and/or the 3.14 release; we ship v1.2.3.",
    "Read docs.rs; the README says why; push to feature/login or `origin/main`; compare `HEAD~1`.",
    "Pass `--dry-run` and `FOO=bar`; keep `.env` and `config.local.json` local; logs go to app.log.",
    "Placeholders: `src/<module>/x.py`, `tests/*.py`, `config/{a,b}.yaml`, path/to/file.py, `$HOME/x.py`.",
    "Also `a.b.c`, www.example.com/x.py and `github.com/pkg/errors`, 10.5% faster, the 2nd try.",
    "Use `git commit -m 'fix: x.py'` carefully.",
    "The frontend/backend split and the api/v2 routes.",
])
def test_prose_that_only_looks_like_code_gives_nothing_checkable(text: str) -> None:
    assert [k for k in kinds(text) if k[0] != "command"] == []


def test_names_of_the_stores_own_notes_and_index_are_skipped() -> None:
    text = "See other-note.md, [[other-note]], [x](other-note.md) and MEMORY.md, but docs/guide.md is code."
    assert kinds(text, ("other-note.md", "MEMORY.md")) == [("path", "docs/guide.md")]


def test_fenced_code_is_scanned_shell_lines_in_full_other_languages_for_quoted_files() -> None:
    text = "```bash\npython scripts/migrate.py --all\n# see docs/setup.md\n```\n```python\nopen(\"config/app.yaml\")\nrender()\n```\n"
    assert kinds(text) == [("path", "scripts/migrate.py"), ("path", "docs/setup.md"), ("path", "config/app.yaml")]


def test_the_same_anchor_twice_on_one_line_is_one_anchor() -> None:
    assert kinds("`a/b.py` and a/b.py") == [("path", "a/b.py")]


def test_parts_are_kept_for_resolving() -> None:
    (line,) = extract("`src/a.py#L10-L20`")
    assert (line.path, line.start, line.end) == ("src/a.py", 10, 20)
    (scoped,) = extract("`billing/invoice.py::render_invoice`")
    assert (scoped.form, scoped.path, scoped.name) == ("scoped", "billing/invoice.py", "render_invoice")
    (make,) = extract("`make -C services/api migrate`")
    assert (make.name, make.where) == ("migrate", "services/api")
