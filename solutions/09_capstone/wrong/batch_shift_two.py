# breaks: test_get_batch
# mistake: target_shift_two
# %% patch: get_batch
# - y = data[starts[:, None] + offsets[None, :] + 1]
# + y = data[starts[:, None] + offsets[None, :] + 2]
