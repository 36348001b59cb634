# breaks: test_scores_shape_by_hand
# mistake: scores_as_output
# %% cell: scores_shape_by_hand
scores_shape = {answer:scores_as_output}
