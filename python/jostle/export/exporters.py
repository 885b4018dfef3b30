"""The exporters of `jostle export --format NAME`, in one registry: each is a class with the
options it takes (named as `jostle export` names them) and `write(selection, **options)`, which
returns (exit status, text for stdout, a line for stderr or ""). A new exporter is a class here
(or registered from its own module); the command knows none of them by name."""

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..records import store
from ..registry import Registry
from . import httpjson, openmetrics

EXPORTERS = Registry("exporter")


@dataclass
class Selection:
    rows: list       # the store's points selected
    drifts: list     # the drifts found among them
    checks: list     # the check runs selected
    every: bool      # every value, not only the latest of each series


@EXPORTERS.register("openmetrics")
class OpenMetrics:
    """OpenMetrics text: on stdout, or a file renamed into place whole (the textfile
    collector reads it at any moment)."""
    options = {"output": "-o"}

    def write(self, sel: Selection, output=None) -> tuple:
        text = openmetrics.render(sel.rows, sel.drifts, sel.every, sel.checks)
        if not output:
            return 0, text, ""
        path = Path(output)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as e:
            raise UsageError(f"-o '{path}': cannot write it ({e.strerror})") from None
        return 0, f"{output}\n", ""


@EXPORTERS.register("httpjson")
class HttpJson:
    """JSON records POSTed one by one to URL (else printed, one a line); what cannot be sent
    waits in the spool for the next export to that URL."""
    options = {"url": "--url", "system": "--system", "spool": "--spool",
               "attempts": "--attempts", "timeout": "--timeout"}

    def write(self, sel: Selection, url=None, system=None, spool=None,
              attempts=httpjson.ATTEMPTS, timeout=httpjson.TIMEOUT_S) -> tuple:
        recs = httpjson.records(sel.rows, sel.every, system)
        url = url or os.environ.get("JOSTLE_HTTPJSON_URL")
        if not url:
            return 0, "".join(json.dumps(r, sort_keys=True) + "\n" for r in recs), ""
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"--url '{url}': not allowed; expected an http:// or https:// URL")
        folder = httpjson.spool_folder(spool)
        out = httpjson.send(url, recs, folder, attempts, timeout=timeout)
        if out["why"]:
            return (store.EXIT_SPOOLED, "",
                    f"jostle: {url} cannot be reached ({out['why']}): {out['spooled']} record(s) "
                    f"kept in the spool {folder}; the next export to it sends them")
        return 0, "", (f"jostle: {out['sent']} record(s) sent to {url}"
                       + (f", and {out['from_spool']} from the spool" if out["from_spool"] else ""))
