# breaks: test_block_params_by_hand
# mistake: forget_w_o
# %% cell: block_params_by_hand
n_params = {answer:forget_w_o}
