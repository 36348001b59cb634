# breaks: test_flops_by_hand
# mistake: flops_forget_factor_two
# %% cell: flops_by_hand
flops = {answer:flops_forget_factor_two}
