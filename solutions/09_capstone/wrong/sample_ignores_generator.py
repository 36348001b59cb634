# breaks: test_sample_next_token
# mistake: generator_ignored
# %% patch: sample_next_token
# - return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
# + return torch.multinomial(probs, num_samples=1).squeeze(-1)
