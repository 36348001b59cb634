# breaks: test_apply_temperature
# mistake: temperature_not_checked
# %% cell: apply_temperature
def apply_temperature(logits: Tensor, temperature: float) -> Tensor:
    """Temperature."""
    return logits / temperature
