# breaks: test_weights_by_hand
# mistake: softmax_wrong_axis
# %% cell: weights_by_hand
weights = {answer:softmax_wrong_axis}
