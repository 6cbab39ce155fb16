"""Order look-ups (a fixed table). Two public functions: `orders_status`, `orders_history`."""

from __future__ import annotations

_ORDERS = {
    "A-1001": {"customer": "c-17", "status": "delivered", "delivered_on": "2025-03-02"},
    "A-1002": {"customer": "c-17", "status": "in transit", "delivered_on": None},
    "A-1003": {"customer": "c-42", "status": "processing", "delivered_on": None},
}


def status(order_id: str) -> dict[str, object]:
    """Status and delivery date of one order.

    Args:
        order_id: The order number, e.g. A-1001.
    """
    order = _ORDERS.get(order_id.strip().upper())
    if order is None:
        return {"order_id": order_id, "error": "no such order"}
    return {"order_id": order_id, **order}


def history(customer_id: str) -> list[str]:
    """Order numbers of a customer, oldest first.

    Args:
        customer_id: The customer number, e.g. c-17.
    """
    return [oid for oid, order in _ORDERS.items() if order["customer"] == customer_id]
