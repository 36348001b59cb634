# breaks: test_sample_next_token
# mistake: temperature_multiplies
# %% patch: sample_next_token
# - logits = logits / temperature
# + logits = logits * temperature
