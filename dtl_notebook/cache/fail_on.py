"""Which findings fail a check: codes, or severities read as thresholds, as in a linter.

`warning` fails on warnings and everything more severe (errors); a code fails on itself.
One rule for the command line's `--fail-on` and the pytest helper's `fail_on`.
"""

from __future__ import annotations

from collections.abc import Iterable

from dtl_notebook.cache.codes import CODES

SEVERITIES = ("error", "warning", "info")  # most severe first


class FailOnError(ValueError):
    """A fail-on name that is neither a code nor a severity; names the field and the value."""


def failing_codes(names: str | Iterable[str], field: str = "fail_on") -> set[str]:
    """The codes `names` fails on: a comma-separated text or an iterable of codes and
    severities. An unknown name raises FailOnError naming `field` and the name."""
    if isinstance(names, str):
        names = names.split(",")
    elif not isinstance(names, Iterable):
        raise FailOnError(
            f"{field}: expected codes or severities (a text or a list), got {names!r}"
        )
    wanted: set[str] = set()
    for item in names:
        name = item.strip() if isinstance(item, str) else item
        if name in SEVERITIES:
            worst = SEVERITIES[: SEVERITIES.index(name) + 1]
            wanted |= {c for c, e in CODES.items() if e.severity in worst}
        elif name in CODES:
            wanted.add(name)
        elif name != "":
            raise FailOnError(
                f"{field}: unknown code or severity {name!r} (severities: "
                f"{', '.join(SEVERITIES)}; codes: `python -m dtl_notebook codes`)"
            )
    return wanted
