# breaks: test_shape_by_hand
# mistake: reshape_without_transpose
# %% cell: shape_by_hand
shape = {answer:reshape_without_transpose}
