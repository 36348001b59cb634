# apply_temperature raising before dividing with an explicit comparison; by-hand answers as strings / annotated.
# %% cell: apply_temperature
def apply_temperature(logits, temperature):
    """Divide by a positive temperature."""
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    return logits * (1.0 / temperature)
# %% cell: weights_by_hand
weights = "{answer}"
# %% cell: paths_by_hand
paths: list[int] = {answer}
