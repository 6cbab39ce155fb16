"""Import paths of the shipped HoloDeck that user code (code graders) imports."""
