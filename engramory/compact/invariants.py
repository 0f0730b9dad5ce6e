"""The invariants a compaction plan is held to before it can be applied: every note reachable
before stays reachable (or sits in archive/), no note loses text except by a move, the host
still loads every line it loaded, and the index ends within the hard caps
(`engramory.compact.plan.make_plan` records them on the plan; a failed one refuses it)."""

from __future__ import annotations

from engramory import layout, size
from engramory.compact.work import Measure, Plan, Work, link_key, text_tokens
from engramory.size import Window
from engramory.size import n as _n
from engramory.store.reader import WIKI_RE, Note, Store
from engramory.store.secrets import quote


def slug_map(store: Store) -> dict[str, list[Note]]:
    """Notes by lower-case slug and by name (a [[link]] names either)."""
    by: dict[str, list[Note]] = {}
    for n in store.notes:
        by.setdefault(n.slug.lower(), []).append(n)
        nm = n.name
        if nm and nm.strip().lower() != n.slug.lower():
            by.setdefault(nm.strip().lower(), []).append(n)
    return by



def reachable(store: Store, index_rels: set[str], texts: dict[str, str], live: set[str]) -> set[str]:
    """Notes pointed to by the index or [[linked]] from a live note (the doctor's reach)."""
    slugs = slug_map(store)
    out = set(index_rels)
    for rel in live:
        text = texts.get(rel)
        if text is None or "[[" not in text:
            continue
        for m in WIKI_RE.finditer(text):
            for hit in slugs.get(link_key(m.group(1)), ()):
                if hit.rel != rel:
                    out.add(hit.rel)
    return out


def _host_loads(store: Store, work: Work, window: Window) -> tuple[str, bool, str]:
    """Every line the host loads whole before the plan, it still loads after, unless the plan
    drops or rewrites that line; and it loads every line the plan writes (layout.py: a cut that
    takes a "---" or "-->" out of a line can let frontmatter or a comment swallow the next)."""

    before, after = store.index_raw or b"", work.index_bytes()
    old_lines = [t[:-1] if t.endswith("\r") else t for t in before.decode("utf-8", "replace").lstrip("\ufeff").split("\n")]
    new_lines = [ln.text for _, ln in work.live_lines()]
    count: dict[str, int] = {}
    for t in old_lines:
        count[t] = count.get(t, 0) + 1
    added = []
    for t in new_lines:
        if count.get(t, 0) > 0:
            count[t] -= 1
        else:
            added.append(t)
    removed = [t for t, k in count.items() for _ in range(k)]
    lost, missing = layout.lost_entries(window, before, after, removed, added)
    if not lost and not missing:
        return ("host-loads", True, "the host loads every line it loaded, but those the plan drops or rewrites")

    shown = ["line %d %s" % (number, quote(text, 60)) for number, text in lost[:3]]
    shown += ["the rewritten %s" % quote(t, 60) for t in missing[:3]]
    return ("host-loads", False, "the host would no longer load (frontmatter or an HTML comment would swallow it): %s"
            % "; ".join(shown))


def check_invariants(plan: Plan, work: Work) -> None:
    store = plan.store
    before_index = {p.rel for p in store.pointers if p.exists and not p.escapes and p.rel}
    live_before = {n.rel for n in store.live}
    texts_before = {n.rel: n.text for n in store.notes if n.text is not None}
    reach_before = reachable(store, before_index, texts_before, live_before)
    after_index = {p.rel for _, ln in work.live_lines() for p in ln.pointers if p.exists and not p.escapes and p.rel}
    live_after = live_before - set(work.moves)
    reach_after = reachable(store, after_index, work.texts, live_after)
    lost = sorted(r for r in reach_before if r not in reach_after and r not in work.moves)
    # a moved note is reachable through archive/; a pointer left on a moved note would be dead
    dangling = sorted(r for r in after_index if r in work.moves)
    plan.invariants.append((
        "reachable", not lost and not dangling,
        "every note reachable before is reachable after or sits in archive/" if not lost and not dangling
        else "unreachable after the plan: %s%s" % (", ".join(lost[:5]), "; pointers left on moved notes: %s"
                                                  % ", ".join(dangling[:5]) if dangling else ""),
    ))
    shrunk = []
    for rel, before in texts_before.items():
        after = work.texts.get(rel)
        if after is None:
            shrunk.append(rel)
            continue
        tb, ta = text_tokens(before), text_tokens(after)
        if ta[:len(tb)] != tb:
            shrunk.append(rel)
    plan.invariants.append((
        "no-text-lost", not shrunk,
        "no note loses text except by a move" if not shrunk else "text would be lost from %s" % ", ".join(shrunk[:5]),
    ))
    plan.invariants.append(_host_loads(store, work, plan.window))
    m = Measure(work.index_bytes(), plan.window)
    within = size.verdict(m.lines, m.units, plan.caps) != size.OVER
    plan.invariants.append((
        "within-hard-caps", within,
        "the index is %s lines / %s %s, within the hard caps of %s / %s"
        % (_n(m.lines), _n(m.units), plan.unit, _n(plan.caps.hard_lines), _n(plan.caps.hard_bytes)) if within else
        "the index would still be %s lines / %s %s, over the hard caps of %s / %s"
        % (_n(m.lines), _n(m.units), plan.unit, _n(plan.caps.hard_lines), _n(plan.caps.hard_bytes)),
    ))
