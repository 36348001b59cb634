# breaks: test_layernorm_by_hand
# mistake: layernorm_unbiased_var
# %% cell: layernorm_by_hand
ln_out = {answer:layernorm_unbiased_var}
