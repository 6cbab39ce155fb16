"""The shop's invoices: a fixed table, so the example runs offline."""

INVOICES = {
    "INV-1042": {"amount": "89.00 EUR", "date": "2025-03-02", "status": "paid"},
    "INV-1043": {"amount": "149.00 EUR", "date": "2025-03-09", "status": "refunded"},
    "INV-1044": {"amount": "34.50 EUR", "date": "2025-03-15", "status": "open"},
}


def lookup_invoice(number: str) -> str:
    """The amount, date and status of invoice `number`, e.g. INV-1042."""
    invoice = INVOICES.get(number.strip().upper())
    if invoice is None:
        return f"No invoice {number}: invoice numbers look like INV-1042."
    return (
        f"Invoice {number.upper()}: {invoice['amount']}, issued {invoice['date']}, "
        f"{invoice['status']}."
    )
