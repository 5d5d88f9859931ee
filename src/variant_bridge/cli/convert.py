"""``variant-bridge convert``: variant wheels as conda packages (placeholder until written)."""
