# breaks: test_sample_next_token
# mistake: temperature_ignored
# The temperature only ever flattens the distribution: T < 1 is treated as 1.
# %% patch: sample_next_token
# - logits = logits / temperature
# + logits = logits / max(temperature, 1.0)  # only ever flatten the distribution
