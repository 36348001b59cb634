# breaks: test_get_batch
# mistake: random_start_off_by_one
# %% patch: get_batch
# - starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
# + starts = torch.randint(len(data) - block_size - 1, (batch_size,), generator=generator)
