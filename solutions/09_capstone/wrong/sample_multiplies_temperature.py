# breaks: test_sample_next_token
# %% patch: sample_next_token
# - logits = logits / temperature
# + logits = logits * temperature
