# get_batch stacking slices of data at starts drawn with torch.randint(0, hi, ...).
# %% cell: get_batch
def get_batch(data, block_size, batch_size, generator=None):
    """Windows stacked from slices."""
    hi = data.shape[0] - block_size
    ix = torch.randint(0, hi, (batch_size,), generator=generator).tolist()
    x = torch.stack([data[i:i + block_size] for i in ix]).to(torch.long)
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix]).to(torch.long)
    return x, y
