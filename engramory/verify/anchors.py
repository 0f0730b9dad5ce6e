"""What a note names in the code: anchors, read from the note's text with their line numbers.

An anchor is one claim a note makes about the repository it describes: a file or folder
(`path`), a place in a file (`line`: `path:12`, `path:12-20`, `path#L10-L20`), a symbol
(`name()` in backticks, `path::name`, `def name`), a package at a version (`pkg@1.2`,
`pkg==1.2`, "uses X 3.1"), a command (`npm run X`, `make X`, `just X`, `python -m M`,
`pytest path::test`, or a binary from PATH, which cannot be checked), or a commit id in
backticks. URLs and absolute paths are anchors too, listed as unverifiable.

Which shapes count where: in code (backticks, shell lines of fenced blocks) every form above;
in prose only forms that cannot be ordinary words (a known extension or file name, a path
under a known top folder, `path:line`, a markdown link's target, "uses X 3.1"). Placeholders
are skipped (`<name>`, `*`, `{a,b}`, `$VAR`, `...`, `path/to/`). Which lines of a note are
read, and with which line numbers: engramory.verify.extract.

Pure functions over text; standard library only.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

PATH, LINE, SYMBOL, PACKAGE, COMMAND, COMMIT = "path", "line", "symbol", "package", "command", "commit"
KINDS = (PATH, LINE, SYMBOL, PACKAGE, COMMAND, COMMIT)

# Extensions that mark a word as a file name. One-letter ones (and .m/.r/.s/.v, which read as
# abbreviations: "a.m.") count only inside backticks or code.
KNOWN_EXT = frozenset("""
py pyi pyx ipynb js jsx mjs cjs ts tsx mts cts go rs rb java kt kts scala swift cs fs php sh bash
zsh fish ps1 psm1 bat cmd sql md mdx rst txt adoc toml yaml yml json jsonc json5 ini cfg conf env
lock xml html htm css scss sass less vue svelte astro proto graphql gql tf tfvars hcl nix lua pl
pm ex exs erl hrl clj cljs cljc edn dart gradle properties mk cmake csv tsv svg png jpg jpeg gif
webp ico pdf wasm zig ml mli hs elm jl vim el tex bib service plist gemspec podspec csproj fsproj
sln vcxproj patch diff sbt groovy tmpl tpl j2 jinja jinja2 erb hbs mustache ejs pug rake cabal nim
cpp cxx hpp hxx hh cc asm bzl bazel cue rego dockerfile containerfile example sample dist
""".split())
CODE_ONLY_EXT = frozenset("c h m r s v".split())
# Files that are files by name alone. README-like names are matched with any extension.
KNOWN_NAMES = frozenset("""
Makefile GNUmakefile makefile Dockerfile Containerfile Justfile justfile Procfile Gemfile Rakefile
Jenkinsfile Vagrantfile Brewfile Pipfile Podfile Caddyfile Earthfile Tiltfile Snakefile Taskfile
CODEOWNERS
""".split())
STEM_NAMES = frozenset("README LICENSE LICENCE CHANGELOG CHANGES CONTRIBUTING NOTICE AUTHORS COPYING".split())
DOTFILES = frozenset("""
.gitignore .gitattributes .gitmodules .editorconfig .dockerignore .npmrc .nvmrc .yarnrc
.python-version .tool-versions .prettierrc .eslintrc .babelrc .pre-commit-config.yaml
.env.example .env.sample .github .gitlab-ci.yml .travis.yml .flake8 .pylintrc .rubocop.yml
""".split())
# A slash path without an extension counts in prose (and in backticks) only under these.
TOP_DIRS = frozenset("""
src lib app apps bin scripts script tools tests test spec docs doc cmd pkg internal ops deploy
config configs packages services infra migrations db web api server client frontend backend
.github .circleci ci build etc hooks examples vendor assets public static templates
""".split())
# In prose, only these (client/server, frontend/backend are words there, not folders).
PROSE_TOP_DIRS = frozenset("src lib app bin scripts tools tests test spec docs cmd pkg internal ops deploy config .github".split())
# Absolute paths in prose: only under these (an API route such as /v1/users is no file).
SYSTEM_DIRS = frozenset("etc usr var opt home Users tmp srv mnt Library private root".split())
# Names that are websites or products, not files.
NOT_FILES = frozenset("docs.rs deps.rs sh.rustup.rs crates.io".split())
# Files that are machine-local or made at run time: naming one says nothing about the code.
LOCAL_RE = re.compile(r"(?:^|/)(?:\.env|[^/]*\.local(?:\.[^/]*)?|[^/]*\.(?:log|pid|sock|tmp|swp|bak|out))\Z")

# A first component that is a host name: www.example.com/x.py, github.com/pkg/errors.
HOST_RE = re.compile(r"[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|app|co|ai|gov|edu|me|sh|rs|gg|cloud|info|so|xyz)/")
COMPONENT_RE = re.compile(r"[\w.@+~-]+\Z")
PLACEHOLDER_CHARS = frozenset("<>*{}$?[]|\u2026")
URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s`<>\"')\]]+")
TOKEN_RE = re.compile(r"[^\s`]+")
LINE_SUFFIX_RE = re.compile(r"(.+?)(?::(\d+)(?:[-:](\d+))?|#L(\d+)(?:-L?(\d+))?)\Z")
COMMIT_RE = re.compile(r"[0-9a-f]{7,40}\Z")
IDENT = r"[A-Za-z_$][\w$]*"
CALL_RE = re.compile(r"(%s(?:(?:\.|::|->|#)%s)*)\((?:[^()]|\([^()]*\))*\)\Z" % (IDENT, IDENT))
DEF_RE = re.compile(r"(?:async\s+)?(?:def|class|func|fn|function|struct|enum|trait|interface|type)\s+(%s)\b" % IDENT)
SCOPED_RE = re.compile(r"([\w./@+-]+?)::(%s(?:::%s)*)(?:\(\))?(\[[^\]]*\])?\Z" % (IDENT, IDENT))
PKG_AT_RE = re.compile(r"((?:@[\w.-]+/)?[A-Za-z0-9][\w./-]*)@[v=^~]?(\d+(?:\.[\w-]+){0,3})\Z")
PKG_EQ_RE = re.compile(r"([A-Za-z0-9][\w.-]*)(?:\[[\w,.-]+\])?===?(\d+(?:\.[\w-]+){0,3})\Z")
PROSE_PKG_RE = re.compile(
    r"\b(?:uses|using|use|pinned to|depends on|requires|upgraded to)\s+([A-Za-z][\w.+-]*)\s+v?(\d+(?:\.\d+){1,3})\b")
STRIP = "()[]{}<>\"'.,;:!?*_"
# Front words of a command that only wrap the real one.
WRAPPERS = frozenset("sudo time nohup exec env command builtin noglob".split())
RUNNERS = (("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("hatch", "run"), ("pdm", "run"), ("rye", "run"))
SCRIPT_RUNNERS = frozenset("npm pnpm yarn bun".split())
NPM_SCRIPT_ALIASES = frozenset("test start stop restart".split())
PYTHONS = re.compile(r"(?:python|python3|python3\.\d+|py|pypy3?)\Z")
# Binaries a code span may start with: a command anchor that cannot be checked (on PATH).
BINARIES = frozenset("""
git docker docker-compose podman kubectl helm terraform tofu cargo go rustc rustup gcc clang node
deno bun npm npx pnpm yarn pip pip3 pipx uv poetry ruby gem bundle rails java mvn gradle dotnet
swift xcodebuild brew apt apt-get curl wget ssh scp rsync aws gcloud az gh psql mysql redis-cli
sqlite3 jq rg sed awk tox nox pre-commit ruff mypy black flake8 eslint prettier tsc jest vitest
""".split())
PYTEST_VALUE_OPTS = frozenset("-k -m -n -p -c -o -W --rootdir --maxfail --durations --tb --junitxml --basetemp".split())


class Anchor:
    """One claim of a note. `kind` is one of KINDS; `form` says how it is checked (path:
    path, bare, dir, url, abs, home; symbol: call, scoped, def; package: at, eq, prose;
    command: npm, make, just, pymod, pytest, binary). `path`, `name`, `start`/`end`,
    `version` and `where` (make -C / just -f folder) hold the parts."""

    __slots__ = ("line", "kind", "text", "form", "path", "name", "start", "end", "version", "where", "col")

    def __init__(self, line: int, kind: str, text: str, form: str, path: str = "", name: str = "",
                 start: int = 0, end: int = 0, version: str = "", where: str = "") -> None:
        self.line = line
        self.kind = kind
        self.text = text
        self.form = form
        self.path = path
        self.name = name
        self.start = start
        self.end = end
        self.version = version
        self.where = where
        self.col = 0  # where on its line it starts: anchors are reported in reading order

    def key(self) -> tuple[str, str, str, str, str, int, int, str, str]:
        """What decides the verdict (not the line): anchors with one key resolve once."""
        return (self.kind, self.form, self.path, self.name, self.text if self.kind == COMMAND else "",
                self.start, self.end, self.version, self.where)

    def __repr__(self) -> str:
        return "Anchor(%d, %s/%s, %r)" % (self.line, self.kind, self.form, self.text)


# -- single tokens -------------------------------------------------------------------------------

def is_placeholder(token: str) -> bool:
    low = token.lower()
    return (any(c in PLACEHOLDER_CHARS for c in token) or "..." in token or low.startswith("path/to/")
            or "/path/to/" in low or low.startswith(("your-", "your_", "my-project")))


def _ext(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    stem, dot, ext = base.rpartition(".")
    if not dot or not stem.strip("."):
        return ""
    return ext.lower()


def _stem_ok(name: str) -> bool:
    """The part before the extension has a letter or underscore: `3.14.py` is not a file."""
    base = name.rsplit("/", 1)[-1]
    stem = base.rpartition(".")[0]
    return any(c.isalpha() or c == "_" for c in stem)


def _components_ok(path: str) -> bool:
    parts = [p for p in path.split("/") if p not in ("", ".", "..")]
    return bool(parts) and all(COMPONENT_RE.match(p) for p in parts)


def file_like(token: str, in_code: bool) -> bool:
    """Whether `token` names a file or folder by its shape. In prose the shapes that cannot be
    ordinary words only; in code (backticks, fences) also one-letter extensions and slash
    paths under a known top folder."""
    if _not_a_path(token):
        return False
    path = token.rstrip("/")
    if not path or not _components_ok(path) or HOST_RE.match(path):
        return False
    base = path.rsplit("/", 1)[-1]
    if LOCAL_RE.search(path):
        return False
    by_name = _by_name(base, path, in_code)
    if by_name is not None:
        return by_name
    return _by_folder(token, path, in_code)


def _not_a_path(token: str) -> bool:
    """A token no path looks like: empty, a placeholder, an option, an assignment, a URL."""
    if not token or is_placeholder(token) or token in NOT_FILES or token.startswith(("-", "@", "=")):
        return True
    return "=" in token or token.startswith("//") or "://" in token or "\\" in token


def _by_name(base: str, path: str, in_code: bool) -> bool | None:
    """Whether the last part's name or extension decides it is a file (None: they do not)."""
    if base in KNOWN_NAMES or base.split(".", 1)[0] in KNOWN_NAMES:
        return True
    if base in DOTFILES or (base.startswith(".") and "/" in path and in_code):
        return True
    if in_code and base in STEM_NAMES:
        return True
    ext = _ext(base)
    if not ext or not _stem_ok(base):
        return None
    if ext in KNOWN_EXT:
        if not in_code and "/" not in path and ext in ("js", "ts") and base[:1].isupper():
            return False  # Node.js, Vue.js, Deno.ts: products, not files
        return True
    if ext in CODE_ONLY_EXT and in_code and base.count(".") == 1:
        return True  # main.c; not a.b.c, which is a dotted name
    return None


def _by_folder(token: str, path: str, in_code: bool) -> bool:
    """Whether a token no name decided is a folder or a path under a known one."""
    if token.endswith("/") and "/" not in path and not path.startswith("."):
        return in_code or path in PROSE_TOP_DIRS  # `src/`: a folder
    if "/" not in path:
        return False
    if path.startswith(("/", "~/")):
        return path.count("/") >= 2 and (in_code or path.lstrip("~/").split("/", 1)[0] in SYSTEM_DIRS)
    first = path.lstrip("./").split("/", 1)[0]
    return token.startswith(("./", "../")) or first in (TOP_DIRS if in_code else PROSE_TOP_DIRS)


def path_anchor(line: int, token: str, in_code: bool) -> Anchor | None:
    """A path or line anchor for `token`, or None."""
    if "." not in token and "/" not in token and token not in KNOWN_NAMES and token not in STEM_NAMES:
        return None  # most words of prose: decided without a regex
    raw = token
    if raw.startswith("file://"):
        raw = raw[7:]
    m = LINE_SUFFIX_RE.match(raw)
    if m and file_like(m.group(1), in_code):
        path = m.group(1)
        start = int(m.group(2) or m.group(4))
        end = m.group(3) if m.group(2) else m.group(5)
        stop = int(end) if end and (m.group(4) or "-" in raw[len(path):]) else start
        if start < 1 or stop < start or stop - start > 100_000:
            return None
        return Anchor(line, LINE, token, _path_form(path), _clean(path), start=start, end=stop)
    if not file_like(raw, in_code):
        return None
    form = _path_form(raw)
    return Anchor(line, PATH, token, form, _clean(raw))


def _path_form(path: str) -> str:
    if path.startswith("/"):
        return "abs"
    if path.startswith("~"):
        return "home"
    if path.endswith("/"):
        return "dir"
    return "path" if "/" in path.strip("/").lstrip("./") else "bare"


def _clean(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def _strip(token: str) -> str:
    token = token.strip(STRIP)
    if token.endswith(("'s", "\u2019s")):
        token = token[:-2]
    if token.endswith("/.") or token.endswith("/,"):
        token = token[:-1]
    return token


# -- code spans ----------------------------------------------------------------------------------

def _commit(line: int, text: str) -> Anchor | None:
    if COMMIT_RE.match(text) and any(c.isdigit() for c in text) and any(c.isalpha() for c in text):
        return Anchor(line, COMMIT, text, "commit", name=text)
    return None


def _package(line: int, text: str, form: str) -> Anchor | None:
    m = (PKG_AT_RE if form == "at" else PKG_EQ_RE).match(text)
    if m is None or is_placeholder(text):
        return None
    name = m.group(1)
    if form == "at" and ("." in name.split("/")[0] and "/" not in name):
        return None  # user@example.com-like
    return Anchor(line, PACKAGE, text, form, name=name, version=m.group(2))


def _symbol(line: int, text: str) -> Anchor | None:
    m = SCOPED_RE.match(text)
    if m and not is_placeholder(m.group(1)):
        head, name = m.group(1), m.group(2)
        if file_like(head, True):
            return Anchor(line, SYMBOL, text, "scoped", _clean(head), name=name.split("::")[-1])
        return Anchor(line, SYMBOL, text, "call", name=name.split("::")[-1], where=head)
    m = CALL_RE.match(text)
    if m:
        parts = re.split(r"\.|::|->|#", m.group(1))
        return Anchor(line, SYMBOL, text, "call", name=parts[-1], where=".".join(parts[:-1]))
    m = DEF_RE.match(text)
    if m and len(text.split()) <= 4:
        return Anchor(line, SYMBOL, text, "def", name=m.group(1))
    return None


def _split_words(text: str) -> list[str]:
    import shlex

    try:
        return shlex.split(text, posix=True)
    except ValueError:
        return text.split()


def _unwrap(words: list[str]) -> list[str]:
    while words and (words[0] in WRAPPERS or re.match(r"[A-Za-z_][A-Za-z0-9_]*=", words[0])):
        words = words[1:]
    for a, b in RUNNERS:
        if len(words) >= 2 and words[0] == a and words[1] == b:
            return _unwrap(words[2:])
    return words


def _command(line: int, segment: str) -> list[Anchor]:
    """Command anchors of one shell command (no `&&`, `;` or `|` left in it)."""
    words = _unwrap(_split_words(segment))
    if not words:
        return []
    tool = words[0]
    rest = words[1:]
    if tool in SCRIPT_RUNNERS and rest:
        if rest[0] in ("run", "run-script") and len(rest) > 1 and not rest[1].startswith("-"):
            return _script(line, tool, rest[1])
        if tool == "npm" and rest[0] in NPM_SCRIPT_ALIASES:
            return _script(line, tool, rest[0])
    if tool in ("make", "gmake", "just"):
        return _targets(line, tool, rest)
    if PYTHONS.match(tool) and len(rest) >= 2 and rest[0] == "-m":
        if rest[1] == "pytest":
            return _pytest(line, rest[2:])
        if re.match(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*\Z", rest[1]):
            return [Anchor(line, COMMAND, "%s -m %s" % (tool, rest[1]), "pymod", name=rest[1])]
    if tool in ("pytest", "py.test"):
        return _pytest(line, rest)
    return []


def _script(line: int, tool: str, name: str) -> list[Anchor]:
    if is_placeholder(name):
        return []
    text = "%s run %s" % (tool, name) if name not in NPM_SCRIPT_ALIASES or tool != "npm" else "npm %s" % name
    return [Anchor(line, COMMAND, text, "npm", name=name)]


def _targets(line: int, tool: str, rest: list[str]) -> list[Anchor]:
    out: list[Anchor] = []
    where = ""
    skip = False
    for i, word in enumerate(rest):
        if skip:
            skip = False
            continue
        if word in ("-C", "-f", "--directory", "--file", "--justfile", "--working-directory", "-d"):
            if i + 1 < len(rest):
                where = rest[i + 1] if word in ("-C", "--directory", "-d", "--working-directory") else \
                    rest[i + 1].rsplit("/", 1)[0] if "/" in rest[i + 1] else where
            skip = True
            continue
        if word.startswith("-") or "=" in word or is_placeholder(word):
            continue
        if not re.match(r"[\w.%/-]+\Z", word):
            break
        if tool == "just" and out:
            break  # just: the words after the recipe are its arguments
        out.append(Anchor(line, COMMAND, "%s %s" % (tool, word), "just" if tool == "just" else "make",
                          name=word, where=where))
    return out


def _pytest(line: int, rest: list[str]) -> list[Anchor]:
    out = []
    skip = False
    for word in rest:
        if skip:
            skip = False
            continue
        if word in PYTEST_VALUE_OPTS:
            skip = True
            continue
        word = re.sub(r"\[[^\]]*\]\Z", "", word)  # a parametrized id: test_x[case]
        if word.startswith("-") or is_placeholder(word):
            continue
        path, _, test = word.partition("::")
        if not file_like(path, True):
            continue
        name = test.split("::")[-1].split("[", 1)[0] if test else ""
        out.append(Anchor(line, COMMAND, "pytest " + word, "pytest", _clean(path), name=name))
    return out


def _segments(text: str) -> Iterator[str]:
    for part in re.split(r"&&|\|\||;|\|(?!\|)", text):
        part = part.strip()
        if part.startswith("$ "):
            part = part[2:]
        if part:
            yield part


def code_anchors(line: int, text: str, shell: bool = True) -> list[Anchor]:
    """Anchors of one code span or one line of a shell code block."""
    text = text.strip()
    if not text:
        return []
    if text.startswith(("$ ", "% ", "> ")):
        text = text[2:].strip()
    if len(text.split()) == 1:
        found = _single(line, text)
        return [found] if found is not None else []
    symbol = _symbol(line, text)
    if symbol is not None:
        return [symbol]
    if shell:
        return _shell(line, text)
    return _tokens(line, text, True)


def _single(line: int, text: str) -> Anchor | None:
    """The anchor of a code span of one word: a URL, a commit, a package, a symbol, a path."""
    url = URL_RE.fullmatch(text)
    if url:
        return Anchor(line, PATH, text, "url")
    for found in (_commit(line, text), _package(line, text, "at"), _package(line, text, "eq"),
                  _symbol(line, text)):
        if found is not None:
            return found
    return path_anchor(line, _clean_code_token(text), True)


def _shell(line: int, text: str) -> list[Anchor]:
    """Anchors of a shell line: its commands, else the words of each segment, else a known binary."""
    out: list[Anchor] = []
    for segment in _segments(text):
        commands = _command(line, segment)
        out += commands
        if not commands:
            out += _words(line, segment)
            words = _unwrap(_split_words(segment))
            if not out and words and words[0] in BINARIES:
                out.append(Anchor(line, COMMAND, segment, "binary", name=words[0]))
    return out


def _words(line: int, segment: str) -> list[Anchor]:
    """Anchors among the words of one shell command; a quoted argument with spaces in it
    (a commit message, an echo) is text, not a path."""
    out = []
    for word in _split_words(segment):
        if any(c.isspace() for c in word):
            continue
        out += _tokens(line, word, True)
    return out


def _clean_code_token(token: str) -> str:
    return token.strip("\"',;")


def _tokens(line: int, text: str, in_code: bool) -> list[Anchor]:
    out = []
    for m in TOKEN_RE.finditer(text):
        token = m.group()
        if URL_RE.match(token):
            url = Anchor(line, PATH, URL_RE.match(token).group().rstrip(".,;:"), "url")  # type: ignore[union-attr]
            url.col = m.start()
            out.append(url)
            continue
        token = _strip(token) if not in_code else _clean_code_token(token)
        if in_code:
            at = _package(line, token, "at")
            if at is not None:
                out.append(at)
                continue
        found = path_anchor(line, token, in_code)
        if found is not None:
            found.col = m.start()
            out.append(found)
    return out


# -- prose ---------------------------------------------------------------------------------------

MD_LINK_RE = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def prose_anchors(line: int, text: str) -> list[Anchor]:
    """Anchors of one line of prose (code spans already taken out). A markdown link's
    target is a path whatever its shape (`[setup](docs/setup)`)."""
    out = []
    for m in MD_LINK_RE.finditer(text):
        target = m.group(1).split("#", 1)[0] if not URL_RE.match(m.group(1)) else m.group(1)
        if URL_RE.match(target):
            out.append(Anchor(line, PATH, target, "url"))
        elif target and not is_placeholder(target) and not target.startswith(("mailto:", "#")):
            out.append(Anchor(line, PATH, target, _path_form(target), _clean(target)))
        else:
            continue
        out[-1].col = m.start()
    text = MD_LINK_RE.sub(lambda m: " " * len(m.group()), text)
    out += _tokens(line, text, False)
    for token in TOKEN_RE.findall(text):
        token = _strip(token)
        if "@" in token[1:]:
            found = _package(line, token, "at")
            if found is not None:
                found.col = text.find(token)
                out.append(found)
    return out


def uses_anchors(line: int, text: str) -> list[Anchor]:
    """"uses X 3.1" and the like: a package at a version, said in words."""
    out = []
    for m in PROSE_PKG_RE.finditer(text.replace("`", "")):
        name, version = m.group(1).rstrip("."), m.group(2)
        if not is_placeholder(name):
            found = Anchor(line, PACKAGE, "%s %s" % (name, version), "prose", name=name, version=version)
            found.col = m.start(1)
            out.append(found)
    return out
