"""An order status tool over a small sample table: deterministic, no network access.

Every public function in this file is a tool; helpers start with `_`. Replace
`_ORDERS` with a call to your order system when you connect a real shop.
"""

from __future__ import annotations

import re

_ORDER_ID = re.compile(r"^[A-Z]\d{4}$")

_ORDERS: dict[str, dict[str, str]] = {
    "A1001": {
        "status": "shipped",
        "items": "Summit 45L Backpack",
        "carrier": "UPS",
        "tracking_number": "TRK-48213-GH",
        "estimated_delivery": "2025-06-14",
    },
    "A1002": {
        "status": "processing",
        "items": "Cascade 2 Tent, Glow 300 Headlamp",
        "note": "Being packed; ships within 2 business days.",
    },
    "A1003": {
        "status": "delivered",
        "items": "Trailmaster Hiking Boots",
        "carrier": "USPS",
        "tracking_number": "TRK-30977-KD",
        "delivered_on": "2025-06-02",
    },
    "A1004": {
        "status": "cancelled",
        "items": "Alpine Down Jacket",
        "note": "Cancelled because the item is out of stock; "
        "a refund of $249.00 was issued to the original payment method.",
    },
}


def _normalize(order_id: str) -> str:
    return order_id.strip().lstrip("#").strip().upper()


def check_order_status(order_id: str) -> dict[str, str | bool]:
    """Look up the status of a customer's order.

    Args:
        order_id: The order number from the confirmation email, e.g. "A1001"
            (case and a leading "#" are ignored).

    Returns:
        `found` plus, for a known order, its status (processing, shipped, delivered
        or cancelled), items, and carrier, tracking number, dates or a note where
        they apply. For an unknown order, a message saying what order numbers look like.
    """
    normalized = _normalize(order_id)
    order = _ORDERS.get(normalized)
    if order is None:
        hint = "" if _ORDER_ID.match(normalized) else " Order numbers look like A1001."
        return {
            "order_id": normalized,
            "found": False,
            "message": f"No order {normalized} was found.{hint}",
        }
    return {"order_id": normalized, "found": True, **order}
