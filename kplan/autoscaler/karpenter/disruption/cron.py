"""The schedules of NodePool disruption budgets: robfig/cron v3.0.1 as Karpenter calls it.

Karpenter parses ``"TZ=UTC " + schedule`` with ``cron.ParseStandard`` (five fields: minute, hour,
day of month, month, day of week; or a descriptor ``@yearly``/``@annually``, ``@monthly``,
``@weekly``, ``@daily``/``@midnight``, ``@hourly``) and asks ``Next(t)``: the first time strictly
after ``t`` (from the next whole second) at which the schedule fires, searched field by field from
the month down, giving up (the zero time) five years ahead. The field syntax follows the
library's parser: ``*`` or ``?``, numbers and ranges ``a-b``, steps ``/n`` (``a/n`` means ``a``
to the maximum), lists with ``,``, month and weekday names (``jan``, ``sun``; any case). Day of
month and day of week combine as in cron: when both are restricted a day matching either fires,
when one is ``*`` both must match. ``@every`` parses in the library but Karpenter's validation
rejects it, so it is refused here.

Times are seconds since the epoch (UTC); there are no daylight-saving gaps in UTC, so the
library's DST corrections never apply.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

_STAR = 1 << 63
_UTC = dt.UTC


@dataclass(frozen=True)
class _Bounds:
    low: int
    high: int
    names: tuple[tuple[str, int], ...] = ()


_MINUTES = _Bounds(0, 59)
_HOURS = _Bounds(0, 23)
_DOM = _Bounds(1, 31)
_MONTHS = _Bounds(1, 12, tuple((m, i + 1) for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))))
_DOW = _Bounds(0, 6, tuple((d, i) for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))))


class CronError(ValueError):
    """The library's parse error, in its words."""


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: one bit per allowed value of each field (the ``*`` bit marks a star)."""

    minute: int
    hour: int
    dom: int
    month: int
    dow: int

    def next(self, t: float) -> float | None:
        """``SpecSchedule.Next``: seconds since the epoch, None for the library's zero time."""
        return _next(self, t)


def _bits(low: int, high: int, step: int) -> int:
    return sum(1 << i for i in range(low, high + 1, step))


def _all(b: _Bounds) -> int:
    return _bits(b.low, b.high, 1) | _STAR


def _int(expr: str, names: tuple[tuple[str, int], ...] = ()) -> int:
    lowered = expr.lower()
    for name, value in names:
        if name == lowered:
            return value
    if not re.fullmatch(r"[+-]?[0-9]+", expr):
        raise CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax')
    num = int(expr, 10)
    if num < 0:
        raise CronError(f"negative number ({num}) not allowed: {expr}")
    return num


def _range(expr: str, b: _Bounds) -> int:
    range_and_step = expr.split("/")
    low_high = range_and_step[0].split("-")
    extra = 0
    if low_high[0] in ("*", "?"):
        start, end, extra = b.low, b.high, _STAR
    else:
        start = _int(low_high[0], b.names)
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end = _int(low_high[1], b.names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if len(low_high) == 1:
            end = b.high
        if step > 1:
            extra = 0
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < b.low:
        raise CronError(f"beginning of range ({start}) below minimum ({b.low}): {expr}")
    if end > b.high:
        raise CronError(f"end of range ({end}) above maximum ({b.high}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


def _field(text: str, b: _Bounds) -> int:
    bits = 0
    for expr in (e for e in text.split(",") if e):
        bits |= _range(expr, b)
    return bits


def parse_standard(spec: str) -> Schedule:
    """``cron.ParseStandard`` (without the ``TZ=`` prefix Karpenter adds: every schedule is UTC)."""
    if not spec:
        raise CronError("empty spec string")
    if spec.startswith("@"):
        midnight_minute, midnight_hour = 1 << 0, 1 << 0
        if spec in ("@yearly", "@annually"):
            return Schedule(midnight_minute, midnight_hour, 1 << 1, 1 << 1, _all(_DOW))
        if spec == "@monthly":
            return Schedule(midnight_minute, midnight_hour, 1 << 1, _all(_MONTHS), _all(_DOW))
        if spec == "@weekly":
            return Schedule(midnight_minute, midnight_hour, _all(_DOM), _all(_MONTHS), 1 << 0)
        if spec in ("@daily", "@midnight"):
            return Schedule(midnight_minute, midnight_hour, _all(_DOM), _all(_MONTHS), _all(_DOW))
        if spec == "@hourly":
            return Schedule(midnight_minute, _all(_HOURS), _all(_DOM), _all(_MONTHS), _all(_DOW))
        raise CronError(f"unrecognized descriptor: {spec}")
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    return Schedule(_field(fields[0], _MINUTES), _field(fields[1], _HOURS), _field(fields[2], _DOM),
                    _field(fields[3], _MONTHS), _field(fields[4], _DOW))


def _day_matches(s: Schedule, t: dt.datetime) -> bool:
    dom_match = bool(1 << t.day & s.dom)
    dow_match = bool(1 << ((t.weekday() + 1) % 7) & s.dow)
    if s.dom & _STAR or s.dow & _STAR:
        return dom_match and dow_match
    return dom_match or dow_match


def _add_months(t: dt.datetime, months: int) -> dt.datetime:
    """Go's AddDate(0, months, 0): the day overflows into the next month."""
    index = t.year * 12 + (t.month - 1) + months
    first = t.replace(year=index // 12, month=index % 12 + 1, day=1)
    return first + dt.timedelta(days=t.day - 1)


def _next(s: Schedule, when: float) -> float | None:
    t = dt.datetime.fromtimestamp(int(when // 1), _UTC) + dt.timedelta(seconds=1)
    added = False
    year_limit = t.year + 5
    while True:  # the library's WRAP label
        if t.year > year_limit:
            return None
        wrapped = False
        while not 1 << t.month & s.month:
            if not added:
                added = True
                t = t.replace(day=1, hour=0, minute=0, second=0)
            t = _add_months(t, 1)
            if t.month == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not _day_matches(s, t):
            if not added:
                added = True
                t = t.replace(hour=0, minute=0, second=0)
            t += dt.timedelta(days=1)
            if t.day == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not 1 << t.hour & s.hour:
            if not added:
                added = True
                t = t.replace(minute=0, second=0)
            t += dt.timedelta(hours=1)
            if t.hour == 0:
                wrapped = True
                break
        if wrapped:
            continue
        while not 1 << t.minute & s.minute:
            if not added:
                added = True
                t = t.replace(second=0)
            t += dt.timedelta(minutes=1)
            if t.minute == 0:
                wrapped = True
                break
        if wrapped:
            continue
        # the seconds field is always "0" for a standard spec
        if t.second != 0:
            if not added:
                added = True
            t += dt.timedelta(seconds=60 - t.second)
            continue
        return t.timestamp()
