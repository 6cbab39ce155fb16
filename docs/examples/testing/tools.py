"""Order tools for the testing guide's example agent (a fixed table, no network)."""

from __future__ import annotations

_ORDERS = {"1042": ("shipped", "2026-11-20"), "1043": ("processing", None)}


def order_status(order_id: str) -> dict[str, str | None]:
    """Where an order is.

    Args:
        order_id: The order number, e.g. 1042.
    """
    status, shipped = _ORDERS.get(order_id, ("unknown", None))
    return {"order": order_id, "status": status, "shipped": shipped}


def refund(order_id: str, amount: float) -> str:
    """Refund part or all of an order.

    Args:
        order_id: The order number.
        amount: How much to refund, in euros.
    """
    return f"refunded {amount:.2f} EUR on order {order_id}"
