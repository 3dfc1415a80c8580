"""What the analyzer hands back: finding records, their positions, and findings decided by a speedup prediction."""
