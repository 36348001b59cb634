# breaks: test_cross_shape_by_hand
# mistake: cross_shape_swapped
# %% cell: cross_shape_by_hand
shape = {answer:cross_shape_swapped}
