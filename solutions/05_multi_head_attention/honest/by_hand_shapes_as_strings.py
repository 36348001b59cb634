# Shape answers typed as strings; the parameter count as an annotated assignment.
# %% cell: shape_by_hand
shape = "{answer}"
# %% cell: scores_shape_by_hand
scores_shape = tuple({answer})
# %% cell: params_by_hand
n_params: int = {answer}
