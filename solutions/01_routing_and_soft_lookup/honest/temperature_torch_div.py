# apply_temperature with torch.div and a not-greater-than check (also rejects NaN).
# %% cell: apply_temperature
def apply_temperature(logits, temperature):
    """torch.div."""
    if not (temperature > 0.0):
        raise ValueError("the temperature must be positive")
    return torch.div(logits, temperature)
