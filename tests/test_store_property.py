"""Issue 19, "What must be shown", second bullet: random sequences of new / update / archive /
restore / compact --apply, hand edits, `rm`, sync-style overwrites (a whole file replaced with
another version of it, a note appearing from nowhere) and review, with secrets sprinkled into
notes, the index and the commands' own arguments. After every step:

- the entries Claude Code loads (tests/store_model.loaded_entries: engramory's model of its
  window) lost none of a note that is still live without a refusal or a warning from the
  engramory command that did it (a hand edit or a sync may lose them: they are not ours);
- a refusal left every byte of the store as it was;
- no secret value is in anything a command printed (stdout and stderr, text and --json), in
  `.engramory/` outside the private blob store (journal, history, manifest, pending), or in
  the index where the command did not find it already;

and at the end, after a review journals what is left, `undo` of every entry, newest first
(the external ones review or a write journaled included), gives back the start byte for byte.

Most steps call `cli.main` in process; about one in eight runs as a real process, through
`python3 -m engramory` or the copied folder's `tools/engramory.py` under -I -S. Budget: 200
examples of 8 to 40 steps (about half a minute on an idle 2-core machine; ENGRAMORY_PROPERTY_EXAMPLES
sets another), deadline=None.

It fails on a seeded bug: with both of the index write's judges patched out of
curate_index.judge (the guard's caps and the layout check), it found `new` putting a note's
pointer on line 201 with exit 0 ("a note came in without an entry the host loads") in the
first 60 examples; with only one of them patched out the other still refuses, and the test
passes. A warning counts only as a `warning:` line in text or a non-empty "warnings" list in
--json (an empty list once counted, and hid that bug)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any, List, Tuple

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.store_model import (
    SECRET_TEXT,
    Result,
    Snapshot,
    leaks_in,
    live_notes,
    loaded_entries,
    metadata_leaks,
    run_in_process,
    run_process,
    secrets_in,
    snapshot,
)

WORDS = ("cache deploy token review schema queue billing merge lint suite kafka redis nginx terraform "
         "docker vault grafana sentry celery pytest webpack eslint").split()
TYPES = ("user", "feedback", "project", "reference")
KINDS = tuple(SECRET_TEXT)
# exit codes that mean "refused, nothing written" (compact --apply exits 2 also after applying
# what it could, when the rest of the target needs a decision: its output says which)
REFUSED = {"new": (1,), "update": (1,), "archive": (1,), "restore": (1,), "compact": (65, 66), "undo": (1, 3)}
MAX_EXAMPLES = int(os.environ.get("ENGRAMORY_PROPERTY_EXAMPLES", "200"))
MAX_STEPS = 40


def note_text(name: str, type_: str, desc: str, body: str) -> str:
    return ("---\nname: %s\ndescription: %s\ntype: %s\ncreated: 2026-01-0%d\nupdated: 2026-01-0%d\n---\n%s\n"
            % (name, desc, type_, 1 + len(name) % 9, 1 + len(desc) % 9, body))


def body_for(type_: str, text: str) -> str:
    if type_ in ("feedback", "project"):
        return text + "\n\n**Why:** it bit us once.\n**How to apply:** check it first."
    return text


words = st.lists(st.integers(0, len(WORDS) - 1), min_size=2, max_size=4)
secret = st.one_of(st.none(), st.none(), st.sampled_from(KINDS))
pick = st.integers(0, 1000)
start_spec = st.fixed_dictionaries({
    "notes": st.lists(st.tuples(st.sampled_from(TYPES), words, secret), min_size=1, max_size=6),
    "filler": st.sampled_from((0, 0, 140, 185, 196, 203)),
    "head": st.sampled_from(("", "", "<!-- curated by hand -->\n", "<!-- unclosed, so the host loads it all\n")),
    "index_secret": secret,
})
op = st.one_of(
    st.tuples(st.just("new"), st.sampled_from(TYPES), words,
              st.sampled_from((None, None, None, "--body", "--hook", "--title", "--description")), st.sampled_from(KINDS),
              st.sampled_from(("", "", " with --- lines", " ends a --> comment", " opens <!-- one", " [x](y.md)"))),
    st.tuples(st.just("update"), pick, st.sampled_from(("--description", "--body", "--type", "--title", "--why")),
              st.booleans()),
    st.tuples(st.just("archive"), pick),
    st.tuples(st.just("restore"), pick),
    st.tuples(st.just("compact")),
    st.tuples(st.just("hand_note"), pick, secret),
    st.tuples(st.just("hand_index"), st.sampled_from(("line", "drop", "secret", "pad", "block", "long")), pick,
              st.sampled_from(KINDS)),
    st.tuples(st.just("rm"), pick, st.integers(0, 9)),
    st.tuples(st.just("sync_old"), pick),
    st.tuples(st.just("sync_new"), words, secret, st.booleans()),
    st.tuples(st.just("review")),
    st.tuples(st.just("read"), st.sampled_from(("search", "doctor", "log")), words),
)
how = st.sampled_from(("in",) * 7 + ("process",))


def warned(out: str, json_out: bool) -> bool:
    """Whether the command's answer carries a warning: a non-empty "warnings" list in --json
    (compact's own report under "warnings" or a receipt's), a `warning:` line in text."""
    if not json_out:
        return any(line.lstrip().lower().startswith("warning") for line in out.splitlines())
    try:
        doc = json.loads(out)
    except ValueError:
        return False
    found: List[Any] = []
    stack: List[Any] = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            found.extend(v for k, v in x.items() if k == "warnings" and v)
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return bool(found)


class Sequence:
    """One run: the store, what it has held (for sync overwrites), and the checks."""

    def __init__(self, tmp: Path, rng: random.Random) -> None:
        self.tmp, self.rng = tmp, rng
        self.root = tmp / "mem"
        self.root.mkdir()
        self.r = str(self.root)
        self.counter = 0
        self.history: dict[str, List[bytes]] = {}
        self.log: List[str] = []  # what was done, for the failure message

    # -- the store at the start --------------------------------------------------------------
    def build(self, spec: dict[str, Any]) -> None:
        sections: dict[str, List[str]] = {t: [] for t in TYPES}
        for type_, ws, kind in spec["notes"]:
            name = self.name("s")
            desc = " ".join(WORDS[w] for w in ws) + " fact " + name
            body = body_for(type_, "The %s." % desc + ("\n%s\n" % SECRET_TEXT[kind] if kind else ""))
            self.write(name + ".md", note_text(name, type_, desc, body).encode())
            sections[type_].append("- [%s](%s.md) \u2014 %s" % (desc.capitalize(), name, ws and WORDS[ws[0]]))
        sections["user"] += ["- filler fact %d about the old build" % i for i in range(spec["filler"])]
        if spec["index_secret"]:
            sections["reference"].append("- deploy credentials: %s" % SECRET_TEXT[spec["index_secret"]])
        text = "# Memory Index\n\n" + spec["head"]
        text += "".join("## %s\n%s\n" % (t, "".join(x + "\n" for x in sections[t])) for t in TYPES)
        self.write("MEMORY.md", text.encode())
        self.engramory(["review", self.r], "in")  # the baseline: what undo of everything gives back
        self.start = snapshot(self.root)

    def name(self, prefix: str) -> str:
        self.counter += 1
        return "%s%d" % (prefix, self.counter)

    def write(self, rel: str, data: bytes) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.history.setdefault(rel, []).append(data)

    def notes(self, archived: bool = False) -> List[str]:
        folder = self.root / "archive" if archived else self.root
        return sorted(p.stem for p in folder.glob("*.md") if p.name != "MEMORY.md") if folder.is_dir() else []

    # -- running engramory, and the checks after each of its steps ---------------------------
    def engramory(self, argv: List[str], how: str, json_out: bool = False) -> Result:
        argv = argv + (["--json"] if json_out else [])
        before = snapshot(self.root)
        if how == "in":
            code, out, err = run_in_process(argv)
        else:
            code, out, err = run_process(self.rng.choice(("module", "tool")), argv, self.tmp)
        after = snapshot(self.root)
        self.log.append("%s -> %d (%s)" % (" ".join(argv), code, how))
        said = out + err
        assert "Traceback" not in err, (self.log, err)
        assert not leaks_in(said), ("a secret was printed", leaks_in(said), self.log, said)
        assert not metadata_leaks(self.root), ("a secret in .engramory/", metadata_leaks(self.root), self.log)
        if code in REFUSED.get(argv[0], ()) or (argv[0] == "compact" and "Nothing was written" in out):
            assert after == before, ("a refusal changed the store", self.log, said)
            return code, out, err
        if argv[0] != "undo":
            new_secrets = secrets_in(after.get("MEMORY.md")) - secrets_in(before.get("MEMORY.md"))
            assert not new_secrets, ("the command put a secret into the index", new_secrets, self.log)
        self.window_kept(before, after, said, warned(out, json_out))
        for rel, data in after.items():
            if before.get(rel) != data:
                self.history.setdefault(rel, []).append(data)
        return code, out, err

    def window_kept(self, before: Snapshot, after: Snapshot, said: str, warned_: bool) -> None:
        live = live_notes(before) & live_notes(after)
        lost = {rel for rel in loaded_entries(before.get("MEMORY.md")) & live
                if rel not in loaded_entries(after.get("MEMORY.md"))}
        if lost:
            event("an entry left the window, with a warning")
            assert warned_, ("entries left the window without a warning", sorted(lost), self.log,
                                               said)
        # a note the command brought in (new, restore, an undo of an archive) is a fact the host
        # must load: its entry lies inside the window, or the command said it does not
        unloaded = sorted((live_notes(after) - live_notes(before)) - loaded_entries(after.get("MEMORY.md")))
        if unloaded:
            event("a note came in past the window, with a warning")
            assert warned_, ("a note came in without an entry the host loads", unloaded, self.log,
                                               said)

    # -- the steps -----------------------------------------------------------------------------
    def step(self, o: Tuple[Any, ...], how: str, json_out: bool) -> None:
        kind = o[0]
        event(kind)
        getattr(self, "do_" + kind)(o, how, json_out)

    def do_new(self, o: Tuple[Any, ...], how: str, json_out: bool) -> None:
        _, type_, ws, where, kind, tricky = o
        name = self.name("n")
        desc = " ".join(WORDS[w] for w in ws) + " learned " + name + tricky
        args = {"--description": desc, "--body": "The %s." % desc, "--hook": None, "--title": None}
        if where is not None:
            args[where] = (args[where] or "about %s" % name) + " " + SECRET_TEXT[kind]
        argv = ["new", self.r, "--type", type_, "--name", name]
        argv += [x for k, v in args.items() if v is not None for x in (k, v)]
        if type_ in ("feedback", "project"):
            argv += ["--why", "it bit us in %s" % name, "--how", "check it first"]
        code, _, _ = self.engramory(argv, how, json_out)
        if where is not None:
            assert code == 1, ("a secret in %s was saved" % where, self.log)

    def do_update(self, o: Tuple[Any, ...], how: str, json_out: bool) -> None:
        _, k, field, with_secret = o
        live = self.notes()
        if not live:
            return
        name = live[k % len(live)]
        value = {"--description": "changed %s %s" % (WORDS[k % len(WORDS)], self.name("d")),
                 "--body": "A new body %s." % self.name("b"), "--type": TYPES[k % 4],
                 "--title": "Label %s" % self.name("t"), "--why": "because %s" % self.name("w")}[field]
        if with_secret and field != "--type":
            value += " " + SECRET_TEXT[KINDS[k % len(KINDS)]]
        argv = ["update", name, self.r, field, value]
        if field == "--type":
            argv += ["--why", "it matters", "--how", "apply it"]
        code, _, _ = self.engramory(argv, how, json_out)
        if with_secret and field != "--type":
            assert code == 1, ("a secret in update %s was saved" % field, self.log)

    def do_archive(self, o: Tuple[Any, ...], how: str, json_out: bool) -> None:
        live = self.notes()
        if live:
            self.engramory(["archive", live[o[1] % len(live)], "--root", self.r], how, json_out)

    def do_restore(self, o: Tuple[Any, ...], how: str, json_out: bool) -> None:
        gone = self.notes(archived=True)
        if gone:
            self.engramory(["restore", gone[o[1] % len(gone)], "--root", self.r], how, json_out)

    def do_compact(self, o: Tuple[Any, ...], how: str, json_out: bool) -> None:
        self.engramory(["compact", self.r, "--apply", "-"], how, json_out)

    def do_review(self, o: Tuple[Any, ...], how: str, json_out: bool) -> None:
        self.engramory(["review", self.r], how, json_out)

    def do_read(self, o: Tuple[Any, ...], how: str, json_out: bool) -> None:
        _, what, ws = o
        argv = {"search": ["search", WORDS[ws[0]], "--root", self.r], "doctor": ["doctor", self.r],
                "log": ["log", self.r]}[what]
        self.engramory(argv, how, json_out)

    def do_hand_note(self, o: Tuple[Any, ...], how: str, json_out: bool) -> None:
        live = self.notes()
        if live:
            rel = live[o[1] % len(live)] + ".md"
            added = SECRET_TEXT[o[2]] if o[2] else "A line added by hand %s." % self.name("h")
            self.write(rel, (self.root / rel).read_bytes() + ("\n%s\n" % added).encode())
            self.log.append("hand edit of %s" % rel)

    def do_hand_index(self, o: Tuple[Any, ...], how: str, json_out: bool) -> None:
        _, what, k, kind = o
        path = self.root / "MEMORY.md"
        lines = path.read_bytes().decode("utf-8", "replace").splitlines(keepends=True) if path.is_file() else []
        if what == "drop" and lines:
            del lines[k % len(lines)]
        elif what == "pad":
            lines += ["- more filler %d by hand\n" % i for i in range(k % 30)]
        elif what == "secret":
            lines.insert(k % (len(lines) + 1), "- pasted by hand: %s\n" % SECRET_TEXT[kind])
        elif what == "block":  # what hides lines from the host: frontmatter, a comment
            lines.insert(k % (len(lines) + 1), ("---\n", "<!-- by hand\n", "<!-- a note -->\n", "-->\n")[k % 4])
        elif what == "long":  # a line compact would pointer-ify, a secret in it
            live = self.notes()
            target = live[k % len(live)] if live else "nowhere"
            lines.insert(k % (len(lines) + 1), "- [Long](%s.md) \u2014 %s %s\n" % (
                target, " ".join(WORDS[(k + i) % len(WORDS)] for i in range(40)), SECRET_TEXT[kind]))
        else:
            live = self.notes()
            target = live[k % len(live)] if live else "nowhere"
            lines.insert(k % (len(lines) + 1), "- [See also](%s.md) \u2014 a hand-made pointer\n" % target)
        self.write("MEMORY.md", "".join(lines).encode())
        self.log.append("hand edit of MEMORY.md (%s)" % what)

    def do_rm(self, o: Tuple[Any, ...], how: str, json_out: bool) -> None:
        live = self.notes()
        rel = "MEMORY.md" if o[2] == 0 or not live else live[o[1] % len(live)] + ".md"
        if (self.root / rel).exists():
            (self.root / rel).unlink()
            self.log.append("rm %s" % rel)

    def do_sync_old(self, o: Tuple[Any, ...], how: str, json_out: bool) -> None:
        rels = sorted(self.history)
        rel = rels[o[1] % len(rels)]
        old = self.history[rel][(o[1] // 7) % len(self.history[rel])]
        self.write(rel, old)
        self.log.append("sync put back an older %s" % rel)

    def do_sync_new(self, o: Tuple[Any, ...], how: str, json_out: bool) -> None:
        _, ws, kind, pointer = o
        name = self.name("x")
        desc = " ".join(WORDS[w] for w in ws) + " synced " + name
        body = "From another machine." + ("\n%s\n" % SECRET_TEXT[kind] if kind else "")
        self.write(name + ".md", note_text(name, "reference", desc, body).encode())
        if pointer:
            path = self.root / "MEMORY.md"
            old = path.read_bytes() if path.is_file() else b""
            self.write("MEMORY.md", old + ("- [%s](%s.md)\n" % (desc, name)).encode())
        self.log.append("sync added %s%s" % (name, " and its pointer" if pointer else ""))

    # -- the end: every entry undone, newest first ---------------------------------------------
    def undo_everything(self) -> None:
        self.engramory(["review", self.r], "in")
        code, out, _ = self.engramory(["log", self.r, "--json"], "in")
        assert code == 0, out
        for e in json.loads(out):
            if e["undone"] or e.get("undoes") is not None:
                continue
            code, out, err = self.engramory(["undo", str(e["id"]), self.r], "in")
            assert code == 0, ("undo %d (%s) refused" % (e["id"], e["command"]), out, err, self.log)
        now = snapshot(self.root)
        assert now == self.start, ("undo of every entry did not give back the start",
                                   sorted(set(now) ^ set(self.start)),
                                   sorted(r for r in now if r in self.start and now[r] != self.start[r]), self.log)


@settings(max_examples=MAX_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
@given(start_spec, st.lists(st.tuples(op, how, st.booleans()), min_size=8, max_size=MAX_STEPS), st.randoms())
def test_random_sequences_keep_the_window_the_secrets_and_the_undo(
        tmp_path_factory: Any, spec: dict[str, Any], steps: List[Tuple[Tuple[Any, ...], str, bool]],
        rng: random.Random) -> None:
    seq = Sequence(tmp_path_factory.mktemp("run"), rng)
    seq.build(spec)
    for o, how_, json_out in steps:
        seq.step(o, how_, json_out)
    seq.undo_everything()

