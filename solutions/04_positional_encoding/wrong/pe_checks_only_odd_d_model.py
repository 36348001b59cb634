# breaks: test_sinusoidal_encoding
# %% patch: sinusoidal_encoding
# -     if not isinstance(d_model, int) or d_model < 2 or d_model % 2:
# +     if d_model % 2:  # only the odd case: d_model = 0 or -4 and a negative L get no ValueError
# -     if not isinstance(L, int) or L < 0:
# +     if not isinstance(L, int):
