"""Caps and rules: defaults, then the environment, then the store's own config file.

The store's file wins over the environment. A value that cannot be used never turns the
guard off: it falls back to the layer below, and the reason is kept in `notes` so the hook
can say so. Imports only `os` (already loaded at interpreter start): hot path.
"""

from engramory import jsonlite, scope
from engramory.scope import CONFIG_NAME as CONFIG_NAME  # the names live in scope; re-exported
from engramory.scope import INDEX_NAME as INDEX_NAME
from engramory.size import HARD_BYTES, HARD_LINES, WARN_BYTES, WARN_LINES, Caps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

CONFIG_VERSION = 1
NOTE_MAX_BYTES = 8_192  # one fact per file: a note past 8 KiB is several facts or a dump
VERIFY_MAX_AGE_DAYS = 90  # `doctor --verify`: a note naming code, verified longer ago, is verified-old
CONFIG_MAX_BYTES = 1 << 20

# environment variable -> Caps attribute
ENV_CAPS = (
    ("ENGRAMORY_WARN", "warn_lines"),
    ("ENGRAMORY_WARN_BYTES", "warn_bytes"),
    ("ENGRAMORY_HARD", "hard_lines"),
    ("ENGRAMORY_HARD_BYTES", "hard_bytes"),
)

# store config key -> Caps attribute
CONFIG_CAPS = (
    ("warnLines", "warn_lines"),
    ("warnBytes", "warn_bytes"),
    ("hardLines", "hard_lines"),
    ("hardBytes", "hard_bytes"),
)
# "agentMayEdit": true is how the user lets the agent change this file (see protect_config).
CONFIG_KEYS = ("version",) + tuple(k for k, _ in CONFIG_CAPS) + ("noteMaxBytes", "readOnly", "agentMayEdit",
                                                                   "verifyMaxAgeDays")
DEFAULTS = {
    "warn_lines": WARN_LINES,
    "warn_bytes": WARN_BYTES,
    "hard_lines": HARD_LINES,
    "hard_bytes": HARD_BYTES,
}


def positive_int(text: str) -> "int | None":
    """A positive decimal integer, or None. Underscores and signs are not accepted."""
    text = text.strip()
    if not text or not text.isdigit() or not text.isascii():
        return None
    value = int(text)
    return value if value > 0 else None


class Settings:
    """What the environment says: caps, the index file name, and which paths are guarded."""

    __slots__ = ("caps", "index_name", "index_paths", "notes")

    def __init__(
        self, caps: "Caps", index_name: str, index_paths: "list[str] | None", notes: "list[str]"
    ) -> None:
        self.caps = caps
        self.index_name = index_name
        self.index_paths = index_paths  # realpaths; None = any file named index_name
        self.notes = notes


def from_env(env: "Mapping[str, str] | None" = None) -> "Settings":
    if env is None:
        env = scope.environ()
    notes: list[str] = []
    caps = Caps()
    for var, attr in ENV_CAPS:
        raw = env.get(var)
        if raw is None:
            continue
        value = positive_int(raw)
        if value is None:
            notes.append(
                "%s=%r is not a positive integer; using the default %d"
                % (var, raw[:40], DEFAULTS[attr])
            )
        else:
            setattr(caps, attr, value)
    name, note = scope.index_name(env)
    if note:
        notes.append(note)
    return Settings(caps, name, scope.index_paths(env), notes)


class StoreConfig:
    """A store's `.engramory.json`, validated. `usable` is False when it exists but cannot be
    used (unreadable, not JSON, unknown keys, bad values): it is then treated as absent."""

    __slots__ = ("path", "exists", "data", "errors", "line_of", "raw")

    def __init__(self, path: str) -> None:
        self.path = path
        self.exists = False
        self.raw: bytes | None = None  # the file's bytes when it was read whole (a plan's digest uses them)
        self.data: dict[str, Any] = {}
        self.errors: list[str] = []
        self.line_of: dict[str, int] = {}

    @property
    def usable(self) -> bool:
        return self.exists and not self.errors

    def caps(self, base: "Caps") -> "Caps":
        caps = Caps(base.warn_lines, base.warn_bytes, base.hard_lines, base.hard_bytes)
        if self.usable:
            for key, attr in CONFIG_CAPS:
                if key in self.data:
                    setattr(caps, attr, self.data[key])
        return caps

    @property
    def note_max_bytes(self) -> int:
        if self.usable and "noteMaxBytes" in self.data:
            return int(self.data["noteMaxBytes"])
        return NOTE_MAX_BYTES

    @property
    def verify_max_age_days(self) -> int:
        if self.usable and "verifyMaxAgeDays" in self.data:
            return int(self.data["verifyMaxAgeDays"])
        return VERIFY_MAX_AGE_DAYS

    @property
    def read_only(self) -> "list[str]":
        return list(self.data.get("readOnly", ())) if self.usable else []

    def problem(self) -> str:
        """One sentence for a nudge: why the file was ignored."""
        return "the store config %s was ignored (%s); the caps in force are the defaults or the environment's" % (
            self.path,
            "; ".join(self.errors[:3]),
        )


def validate(obj: "Any") -> "list[str]":
    """Every reason `obj` is not a valid store config (empty when it is)."""
    if not isinstance(obj, dict):
        return ["the top level must be a JSON object, not %s" % type(obj).__name__]
    errors = []
    for key in obj:
        if key not in CONFIG_KEYS:
            errors.append("unknown key %r (known: %s)" % (key[:40], ", ".join(CONFIG_KEYS)))
    version = obj.get("version")
    if "version" not in obj:
        errors.append("missing \"version\": add \"version\": %d" % CONFIG_VERSION)
    elif version != CONFIG_VERSION or isinstance(version, bool):
        errors.append("\"version\" must be %d, not %r" % (CONFIG_VERSION, version))
    errors.extend(_number_errors(obj))
    errors.extend(_flag_errors(obj))
    return errors


def _number_errors(obj: "dict[str, Any]") -> "list[str]":
    """The caps and limits: positive integers, each warning cap at most its hard cap."""
    errors = []
    for key in [k for k, _ in CONFIG_CAPS] + ["noteMaxBytes", "verifyMaxAgeDays"]:
        if key in obj:
            value = obj[key]
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                errors.append("%r must be a positive integer, not %r" % (key, value))
    for warn, hard in (("warnLines", "hardLines"), ("warnBytes", "hardBytes")):
        w, h = obj.get(warn), obj.get(hard)
        if type(w) is int and type(h) is int and w > h:
            errors.append("%r (%d) is above %r (%d)" % (warn, w, hard, h))
    return errors


def _flag_errors(obj: "dict[str, Any]") -> "list[str]":
    """agentMayEdit a boolean, readOnly a list of globs."""
    errors = []
    if "agentMayEdit" in obj and not isinstance(obj["agentMayEdit"], bool):
        errors.append("\"agentMayEdit\" must be true or false, not %r" % (obj["agentMayEdit"],))
    if "readOnly" in obj:
        ro = obj["readOnly"]
        if not isinstance(ro, list) or not all(isinstance(g, str) and g.strip() for g in ro):
            errors.append("\"readOnly\" must be a list of non-empty glob strings")
    return errors


def read_bounded(path: str, limit: int) -> bytes:
    """At most `limit` bytes of the regular file `path`, through scope.read_bounded: a FIFO
    or a device is refused with OSError before a byte is read. Links are followed."""
    return scope.read_bounded(path, limit - 1)[0][:limit] if limit > 0 else b""


def load_store_config(root: str) -> "StoreConfig":
    """Read and validate `<root>/.engramory.json`. Never raises."""
    cfg = StoreConfig(scope.join(root, CONFIG_NAME))
    try:
        raw = read_bounded(cfg.path, CONFIG_MAX_BYTES + 1)
    except FileNotFoundError:
        return cfg
    except NotADirectoryError:
        return cfg
    except OSError as exc:
        cfg.exists = True
        cfg.errors.append("cannot be read: %s" % (exc.strerror or exc.__class__.__name__))
        return cfg
    cfg.exists = True
    if len(raw) > CONFIG_MAX_BYTES:
        cfg.errors.append("larger than %d bytes" % CONFIG_MAX_BYTES)
        return cfg
    cfg.raw = raw
    try:
        text = raw.decode("utf-8-sig") if raw.startswith(b"\xef\xbb\xbf") else raw.decode("utf-8")
        obj = jsonlite.loads(text)
    except UnicodeDecodeError:
        cfg.errors.append("not valid UTF-8")
        return cfg
    except ValueError as exc:
        cfg.errors.append("not valid JSON (%s)" % exc)
        return cfg
    cfg.errors.extend(validate(obj))
    if isinstance(obj, dict):
        cfg.data = obj
        for key in obj:
            marker = '"%s"' % key
            pos = text.find(marker)
            cfg.line_of[key] = text.count("\n", 0, pos) + 1 if pos >= 0 else 1
    return cfg



def in_force(
    settings: "Settings", store: "StoreConfig", window: "Any" = None
) -> "tuple[Caps, list[str]]":
    """The caps in force for a store's index and the notes to pass on: the store's file over
    the environment over the defaults; an unusable store file is ignored, and said so; a
    hard cap above the host's window (`window`: a size.Window; default Claude Code's) is kept
    but said, since it no longer protects."""
    notes = list(settings.notes)
    if store.exists and not store.usable:
        notes.append(store.problem())
    caps = store.caps(settings.caps)
    if window is None:
        notes.extend(window_problems(caps, store))
    else:
        big = 1 << 62  # a host without a limit of that kind
        notes.extend(window_problems(
            caps, store, window.lines if window.lines is not None else big,
            window.size if window.size is not None else big, "the host",
        ))
    return caps, notes


# -- the config protects itself (issue 10) ---------------------------------------------------

# The window of the host that loads the index: Claude Code 2.1.332 loads 200 lines and 25,000
# UTF-16 units (the defaults are exactly that). Hosts with another window pass their own.
WINDOW_LINES = HARD_LINES
WINDOW_UNITS = HARD_BYTES


def window_problems(
    caps: "Caps", store: "StoreConfig | None" = None, lines: int = WINDOW_LINES, units: int = WINDOW_UNITS,
    host: str = "Claude Code",
) -> "list[str]":
    """One sentence per hard cap above the host's window: an index may then grow past what
    the host loads with no deny, so the cap no longer protects. Names where the value comes
    from (the store config's key, else the environment variable)."""
    out = []
    for attr, limit, unit, key, var in (
        ("hard_lines", lines, "lines", "hardLines", "ENGRAMORY_HARD"),
        ("hard_bytes", units, "bytes", "hardBytes", "ENGRAMORY_HARD_BYTES"),
    ):
        value = getattr(caps, attr)
        if value <= limit:
            continue
        if store is not None and store.usable and key in store.data:
            where = "%r in %s" % (key, store.path)
        else:
            where = var
        out.append(
            "the hard cap %s = %s %s is above the %s %s %s loads: an index can grow past the window "
            "with no deny, so the cap no longer protects it; lower it to %s or less"
            % (where, "{:,}".format(value), unit, "{:,}".format(limit), unit, host, "{:,}".format(limit))
        )
    return out


def is_config_path(path: str) -> bool:
    """`path` is a store config (named .engramory.json, or a link to one). Cheap."""
    if scope.basename(path) == CONFIG_NAME:
        return True
    return scope.islink(path) and scope.basename(scope.realpath(path)) == CONFIG_NAME


def protect_config(path: str) -> "str | None":
    """The deny reason when the agent's Edit/Write of `path` would change a store config, or
    None. The config decides what the guard enforces (caps, readOnly), so the agent must not
    be able to raise a cap or drop a readOnly glob and then do what it forbade. The user
    allows the agent's edits by putting `"agentMayEdit": true` in the file themselves."""
    if not is_config_path(path):
        return None
    real = scope.realpath(path)
    cfg = load_store_config(scope.dirname(real))
    if cfg.usable and cfg.data.get("agentMayEdit") is True:
        return None
    return (
        "engramory: %s is the memory store's own config (caps, readOnly): it is read-only to the "
        "agent, so that no edit can raise a cap or drop a readOnly rule and then do what it "
        "forbade. Leave it as it is and tell the user what you wanted to change; they can edit it "
        "themselves, or let you by adding \"agentMayEdit\": true to it." % path
    )


def caps_for(index: str, env: "Mapping[str, str] | None" = None) -> "tuple[Caps, list[str]]":
    """The caps in force for `index`, exactly as the hook computes them, and any notes."""
    return in_force(from_env(env), load_store_config(scope.dirname(scope.realpath(index))))

