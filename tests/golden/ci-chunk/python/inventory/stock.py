"""Stock levels of a warehouse, with reservations that expire."""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterator

from .store import Store
from inventory import store as store_module

log = logging.getLogger(__name__)

DEFAULT_TTL = 15 * 60  # seconds


@dataclass(frozen=True)
class Reservation:
    """Items held for an order until `expires`."""

    sku: str
    quantity: int
    expires: float = field(default=0.0)

    def expired(self, now: float | None = None) -> bool:
        return (now or time.time()) >= self.expires


class OutOfStock(Exception):
    pass


class Stock:
    """The quantities on hand, keyed by SKU."""

    class Snapshot:
        def __init__(self, levels):
            self.levels = dict(levels)

    def __init__(self, store: Store, warehouse: str):
        self._store = store
        self._warehouse = warehouse
        self._levels = defaultdict(int, store.load(warehouse))
        self._reserved: list[Reservation] = []

    @property
    def warehouse(self) -> str:
        return self._warehouse

    def available(self, sku: str) -> int:
        held = sum(r.quantity for r in self._live() if r.sku == sku)
        return self._levels[sku] - held

    def reserve(self, sku: str, quantity: int, ttl: float = DEFAULT_TTL) -> Reservation:
        if self.available(sku) < quantity:
            raise OutOfStock(sku)
        r = Reservation(sku, quantity, time.time() + ttl)
        self._reserved.append(r)
        log.debug("reserved %d of %s", quantity, sku)
        return r

    def _live(self) -> Iterator[Reservation]:
        now = time.time()
        return (r for r in self._reserved if not r.expired(now))

    @staticmethod
    def merge(a: dict, b: dict) -> dict:
        out = dict(a)
        for sku, n in b.items():
            out[sku] = out.get(sku, 0) + n
        return out

    def snapshot(self) -> "Stock.Snapshot":
        return Stock.Snapshot(self._levels)

    async def sync(self, remote):
        def changed(sku):
            return remote.get(sku) != self._levels[sku]

        for sku in filter(changed, list(self._levels)):
            await remote.put(sku, self._levels[sku])
        self._store.save(self._warehouse, dict(self._levels))


def restock(stock: Stock, deliveries: dict[str, int]) -> None:
    """Add delivered quantities; unknown SKUs are created."""
    for sku, n in deliveries.items():
        stock._levels[sku] += n


if __name__ == "__main__":
    s = Stock(Store("."), "main")
    print(s.available("apple"))
