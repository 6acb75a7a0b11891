"""The records the paged test APIs serve (latency_server.py, rate_limited_server.py).

A source has `pages` pages of `per_page` records (`total` = pages x per_page). Records are
the same on every run: {"id", "item", "page", "name", "value", "active", "updated_at",
"tags"}; ids run 1..total for the single source (item null) and, for item k (0-based, in
the order the items were given), k*total+1 .. k*total+total: unique across items.
Standard library only: both Debian's python3 and the PyPI environment import it.
"""
import json
import time

BASE_DAY = 1767225600  # 2026-01-01T00:00:00Z


class PagedRecords:
    """The records of one server's sources: the single one and one per item."""

    def __init__(self, pages, per_page, items, cache=False):
        self.pages = pages
        self.per_page = per_page
        self.total = pages * per_page
        self.items = list(items)
        self.index = {item: position for position, item in enumerate(self.items)}
        # (item, first, count) -> text, when caching: a page made once is served again without its
        # cost (~3 ms for 1,000 records here), so a client's speed is measured, not this one's.
        self.cache = {} if cache else None

    def json(self, item, first, count):
        """Records first .. first+count-1 (0-based, clipped to the source) of `item` (None:
        the single source), as the text of a JSON array."""
        if self.cache is None:
            return self.make(item, first, count)
        key = (item, first, count)
        text = self.cache.get(key)
        if text is None:
            text = self.cache[key] = self.make(item, first, count)
        return text

    def make(self, item, first, count):
        base = self.index[item] * self.total if item is not None else 0
        item_json = json.dumps(item)
        out = []
        for local in range(max(first, 0), min(first + count, self.total)):
            n = base + local + 1
            page = local // self.per_page + 1
            day = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(BASE_DAY + n * 61))
            out.append(f'{{"id":{n},"item":{item_json},"page":{page},"name":"record {n}","value":{n * 1.25 % 1000:.2f},'
                       f'"active":{"true" if n % 3 else "false"},"updated_at":"{day}","tags":["t{n % 7}","t{n % 5}"]}}')
        return "[" + ",".join(out) + "]"

    def page(self, item, number, per_page=None):
        """Page `number` (counted from 1) of `item`: a JSON array, [] past the end."""
        per_page = per_page or self.per_page
        return self.json(item, (number - 1) * per_page, per_page) if number >= 1 else "[]"


def items_from(names, count):
    """The item list of a server's --items a,b,c or --items-count K (item-1 .. item-K)."""
    if count:
        return [f"item-{n}" for n in range(1, count + 1)]
    return [item for item in (names or "").split(",") if item]
