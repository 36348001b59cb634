# breaks: test_get_batch
# mistake: generator_ignored
# %% patch: get_batch
# - starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
# + starts = torch.randint(len(data) - block_size, (batch_size,))
