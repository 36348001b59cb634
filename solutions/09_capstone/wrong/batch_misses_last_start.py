# breaks: test_get_batch
# %% patch: get_batch
# - starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
# + starts = torch.randint(len(data) - block_size - 1, (batch_size,), generator=generator)
