"""Layer 3: what the model context holds, per provider."""
