"""Recording into the results store (docs/history.md): the one piece of code behind both
`jostle history add PATH…` and `--record [DB]` of the commands that write campaigns, scans and
checks, so that both add the same way (a run added twice is one run) and fall back on the same
spool when the store cannot be reached."""

import argparse
import sys
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import JostleError, UsageError
from ..records import store, store_docs, store_spool, store_url
from . import _options


def site_defaults(site) -> dict:
    """The [check] table of the site file SITE (or $JOSTLE_SITE; docs/check.md): its `store`
    names the results store, its `spool` the checks' records. {} without a site file."""
    path = _options.given(None, "site", site)[0]
    if not path:
        return {}
    if not Path(path).is_file():
        if site:
            raise UsageError(f"--site '{site}': no such file")
        return {}
    from ..analysis import check_site
    return check_site.load(path).defaults


def store_of(db=None, site=None) -> str:
    """DB, else $JOSTLE_DB, else the site file's [check] store, else the default file; one of
    no store's scheme (mysql://, postgresq://) refused, naming where it came from (exit 2)."""
    named, where = _options.given(None, "db", db)
    if named:
        return _judged(named, where)
    key = _options.SHARED["db"].site_key
    site_store = site_defaults(site).get(key)
    if site_store:
        return _judged(site_store, f"the site file's [check] {key}")
    return _options.SHARED["db"].fallback


def _judged(db, where) -> str:
    if store_url.problem(db):
        raise UsageError(f"{where}: {store_url.message(db, store.shown(db))}")
    return str(db)


def database(args) -> str:
    """The store of a command with --db and --site."""
    return store_of(getattr(args, "db", None), getattr(args, "site", None))


def _left_out(found):
    for path, why in found.skipped[:10]:
        print(f"jostle: {path}: left out: {why}", file=sys.stderr)
    if len(found.skipped) > 10:
        print(f"jostle: … and {len(found.skipped) - 10} more left out", file=sys.stderr)


def _for_this_store(found, db) -> tuple:
    """FOUND.spooled split: ([(path, doc)] this store may take (spooled for it, or by an older
    jostle that named no store), [path] kept for another store (left in its spool))."""
    key = store_url.key(db)
    mine, others = [], []
    for p, d in found.spooled:
        k = found.spool_keys.get(str(p), "")
        (mine.append((p, d)) if k in ("", key) else others.append(p))
    return mine, others


def record(paths, db, campaign=None, cls=None, spool=None) -> int:
    """Add every complete run and check record under PATHS, and what the spool kept for this
    store, to the store DB: 0, 1 (a file damaged or that could not be read, the others added)
    or store.EXIT_SPOOLED (the store could not be reached: the runs are in its spool, one line
    says so). A DB of no store's scheme is refused first, nothing read or made (exit 2)."""
    store.refuse_unknown_scheme(db)
    spool = store_spool.folder(spool)
    found = store_docs.find(paths, campaign, cls)
    mine, others = _for_this_store(found, db)
    waiting = store_spool.pending(spool, db)
    spooled = {d["uid"]: (p, d) for p, d in waiting + mine}
    docs = [d for _, d in spooled.values()] + [d for d in found.docs if d["uid"] not in spooled]
    try:
        with store.open_store(db) as st:     # a file that is not a store: refused here
            _left_out(found)
            added, present = st.add(docs)
    except store.StoreUnreachable as e:
        fresh = [d for d in found.docs if d["uid"] not in spooled]
        store_spool.put(spool, fresh, db)
        _left_out(found)
        print(f"jostle: {e}; {len(fresh)} run(s) kept in the spool "
              f"{store_spool.of_store(spool, db)} ({len(spooled)} already there): `jostle "
              "history add` adds them when the store is back", file=sys.stderr)
        return store.EXIT_SPOOLED
    store_spool.done(p for p, _ in spooled.values())
    _unclaimed(spool, others)
    unread = [p for p, why in found.skipped if store_docs.unreadable(why)]
    damaged = [p for p, why in found.skipped if not why.startswith("incomplete")]
    print(f"jostle: {len(added)} run(s) added to {store.shown(db)}, {len(present)} already "
          f"there ({len(spooled)} from the spool); {len(found.skipped)} file(s) left out"
          + (f", {len(unread)} of them unreadable" if unread else ""), file=sys.stderr)
    return 1 if damaged else 0


def _unclaimed(spool, others):
    """Say what a spool holds that this add did not send: records of another store, and an
    older jostle's files that name no store (sent only where the operator says)."""
    if others:
        print(f"jostle: {len(others)} spooled run(s) under the paths given wait for another "
              "store: left in their spool", file=sys.stderr)
    old = store_spool.pending(spool)
    if old:
        print(f"jostle: {len(old)} run(s) in the spool {spool} name no store (an older "
              f"jostle's): left there; `jostle history add {spool} --db DB` adds them to DB",
              file=sys.stderr)


# ---------------------------------------------------------------- --record [DB]

def _url_problem(url) -> str:
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        return "it holds spaces or control characters"
    try:
        _ = urlsplit(url).port      # a port that is not a number from 0 to 65535
    except ValueError as e:
        return str(e)
    try:
        from psycopg import conninfo
    except ImportError:
        return "a postgresql:// store needs psycopg: pip install 'jostle[postgresql]'"
    try:
        conninfo.conninfo_to_dict(url)     # libpq's own reading of it
    except Exception as e:   # psycopg's ProgrammingError, its message naming what is wrong
        return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return ""


def store_type(text):
    """--record DB, judged before anything is measured: an SQLite file in a folder that exists,
    or a PostgreSQL URL libpq reads; nothing of another scheme (mysql://, postgresq://). A store
    that is down is not judged here: it is spooled."""
    if store_url.problem(text):
        raise argparse.ArgumentTypeError(store_url.message(text, store.shown(text)))
    if store.is_postgresql(text):
        why = _url_problem(text)
    else:
        p = Path(store_url.sqlite_path(text))
        why = ("it is empty" if not text else "it is a directory" if p.is_dir()
               else f"its folder '{p.parent}' does not exist" if not p.parent.is_dir() else "")
    if why:
        raise argparse.ArgumentTypeError(f"{ascii(store.shown(text))} is not a store: {why}")
    return text


def add_option(group):
    """--record [DB] of a command that writes campaigns, scans or checks."""
    group.add_argument("--record", nargs="?", const=True, type=store_type, metavar="DB",
                       help="add what the command wrote to the results store DB (an SQLite "
                            "file or postgresql://…; without DB: $JOSTLE_DB, the site file's "
                            f"[check] store, else {store.DEFAULT_PATH}), as `jostle history "
                            "add` does; a store out of reach: kept in the spool "
                            "($JOSTLE_STORE_SPOOL) for the next `history add`")


def then(args, paths, status) -> int:
    """The command's STATUS, PATHS (what it wrote) added to the store first when it was given
    --record (not with --dry-run). The measurement stands whatever the store does: a store out
    of reach keeps the records in the spool, a store that refuses them is one line, and the
    status stays the command's (a check's verdict above all)."""
    given = getattr(args, "record", None)
    if not given or getattr(args, "dry_run", False):
        return status
    paths = [p for p in paths if p and Path(p).exists()]
    if not paths:
        return status
    try:
        record(paths, store_of(None if given is True else given, getattr(args, "site", None)))
    except JostleError as e:
        print(f"jostle: error: --record: {e}; the records stay in {', '.join(map(str, paths))}",
              file=sys.stderr)
    return status


def then_campaign(args, status) -> int:
    """then() for a command that writes the campaign OUTPUT-DIR/CAMPAIGN: all of it is
    added, as `jostle history add OUTPUT-DIR/CAMPAIGN` adds it."""
    return then(args, [Path(args.output_dir) / args.campaign], status)
