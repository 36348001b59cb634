# breaks: test_scores_shape_by_hand
# mistake: scores_without_head_axis
# %% cell: scores_shape_by_hand
scores_shape = {answer:scores_without_head_axis}
