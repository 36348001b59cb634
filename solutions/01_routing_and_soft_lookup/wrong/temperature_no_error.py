# breaks: test_apply_temperature
# %% cell: apply_temperature
def apply_temperature(logits: Tensor, temperature: float) -> Tensor:
    """Temperature."""
    return logits / temperature
