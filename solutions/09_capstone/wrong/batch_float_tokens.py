# breaks: test_get_batch, test_training_run
# mistake: token_ids_not_long
# %% patch: get_batch
# - return x.long(), y.long()
# + return x.float(), y.float()
