# breaks: test_apply_temperature, test_soft_lookup
# mistake: temperature_not_checked
# soft_lookup divides through apply_temperature, so it accepts a temperature <= 0 too (its own Raises).
# %% cell: apply_temperature
def apply_temperature(logits: Tensor, temperature: float) -> Tensor:
    """Temperature."""
    return logits / temperature
