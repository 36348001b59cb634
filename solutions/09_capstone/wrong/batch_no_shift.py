# breaks: test_get_batch, test_training_run
# mistake: target_no_shift
# %% patch: get_batch
# - y = data[starts[:, None] + offsets[None, :] + 1]
# + y = data[starts[:, None] + offsets[None, :] + 0]
