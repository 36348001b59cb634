# breaks: test_sinusoidal_encoding
# mistake: pe_exponent_i_not_2i
# The exponent uses the pair index i instead of 2i: 1 / base^(i / d_model).
# %% patch: sinusoidal_encoding
# - two_i = torch.arange(0, d_model, 2, dtype=torch.float32, device=device)  # (d_model/2,)
# + two_i = torch.arange(0, d_model // 2, dtype=torch.float32, device=device)
