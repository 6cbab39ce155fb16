"""Forms written for other tools (the shipped HoloDeck, Omnigent), turned into ours."""
