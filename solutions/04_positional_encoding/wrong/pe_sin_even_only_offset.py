# breaks: test_sinusoidal_encoding
# mistake: pe_pair_exponent
# The sine columns take the exponent of the next column ((2i + 1) / d_model): wrong at even columns only.
# %% patch: sinusoidal_encoding
# - table[:, 0::2] = torch.sin(angles)
# + table[:, 0::2] = torch.sin(positions / base ** ((two_i + 1) / d_model))
