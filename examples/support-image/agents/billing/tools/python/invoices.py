"""Invoice look-ups (a fixed table)."""

from __future__ import annotations

_INVOICES = {
    "A-1001": [("Steel kettle", 39.00), ("Delivery", 4.90), ("VAT 20%", 8.78)],
    "A-1002": [("Glass blender", 79.00), ("Delivery", 0.00), ("VAT 20%", 15.80)],
}


def invoice(order_id: str) -> dict[str, object]:
    """The invoice lines and total of an order.

    Args:
        order_id: The order number, e.g. A-1001.
    """
    lines = _INVOICES.get(order_id.strip().upper())
    if lines is None:
        return {"order_id": order_id, "error": "no invoice yet"}
    return {
        "order_id": order_id,
        "lines": [{"item": item, "amount": amount} for item, amount in lines],
        "total": round(sum(amount for _, amount in lines), 2),
    }
