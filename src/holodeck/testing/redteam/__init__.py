"""`holodeck redteam`: attack an agent with each plugin's static payloads, grade what it
did, report it and keep what got through as test cases (docs/redteam.md)."""
