# breaks: test_sinusoidal_encoding
# %% patch: sinusoidal_encoding
# - table[:, 0::2] = torch.sin(angles)
# + table[:, 0::2] = torch.cos(angles)
# - table[:, 1::2] = torch.cos(angles)
# + table[:, 1::2] = torch.sin(angles)
