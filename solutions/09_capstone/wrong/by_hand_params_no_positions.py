# breaks: test_params_by_hand
# mistake: forget_position_embedding
# %% cell: params_by_hand
n_params = {answer:forget_position_embedding}
