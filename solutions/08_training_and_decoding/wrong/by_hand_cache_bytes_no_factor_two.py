# breaks: test_cache_bytes_by_hand
# mistake: kv_forget_factor_two
# %% cell: cache_bytes_by_hand
n_bytes = {answer:kv_forget_factor_two}
