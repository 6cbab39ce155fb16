"""One public function, so the tool is named after the file: `shipping_eta`."""

from __future__ import annotations

_DAYS_LEFT = {"A-1002": 2, "A-1003": 4}


def estimate(order_id: str) -> str:
    """Estimated delivery time of an order that has not arrived yet.

    Args:
        order_id: The order number, e.g. A-1002.
    """
    days = _DAYS_LEFT.get(order_id.strip().upper())
    if days is None:
        return f"no delivery estimate for {order_id}"
    return f"{order_id} should arrive in {days} working days"
