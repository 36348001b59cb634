# breaks: test_uniform_by_hand
# mistake: log2_instead_of_ln
# %% cell: uniform_by_hand
start_loss = {answer:log2_instead_of_ln}
