# breaks: test_get_batch
# mistake: token_ids_not_long
# %% patch: get_batch
# - return x.long(), y.long()
# + return x.float(), y.float()
