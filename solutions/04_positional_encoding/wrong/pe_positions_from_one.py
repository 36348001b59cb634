# breaks: test_sinusoidal_encoding
# mistake: index_from_one
# %% patch: sinusoidal_encoding
# - positions = torch.arange(L, dtype=torch.float32, device=device)[:, None]
# + positions = torch.arange(1, L + 1, dtype=torch.float32, device=device)[:, None]
