"""Order look-ups for the order-support example (a fixed table, no network)."""

from __future__ import annotations

_ORDERS = {
    "ORD-1042": {"status": "shipped", "shipped_on": "3 March", "arrives_on": "6 March"},
    "ORD-1043": {"status": "processing", "shipped_on": None, "arrives_on": None},
}


def check_order_status(order_id: str) -> dict[str, str | None]:
    """Return the status of an order.

    Args:
        order_id: The order number, e.g. ORD-1042.
    """
    order = _ORDERS.get(order_id.strip().upper())
    if order is None:
        return {"order_id": order_id, "status": "unknown"}
    return {"order_id": order_id, **order}
