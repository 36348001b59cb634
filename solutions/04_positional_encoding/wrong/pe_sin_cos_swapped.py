# breaks: test_sinusoidal_encoding
# mistake: pe_sin_cos_swapped
# %% patch: sinusoidal_encoding
# - table[:, 0::2] = torch.sin(angles)
# + table[:, 0::2] = torch.cos(angles)
# - table[:, 1::2] = torch.cos(angles)
# + table[:, 1::2] = torch.sin(angles)
