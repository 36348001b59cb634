# breaks: test_apply_temperature, test_soft_lookup
# mistake: temperature_multiplies
# %% cell: apply_temperature
def apply_temperature(logits: Tensor, temperature: float) -> Tensor:
    """Temperature."""
    if temperature <= 0:
        raise ValueError('temperature must be > 0')
    return logits * temperature
