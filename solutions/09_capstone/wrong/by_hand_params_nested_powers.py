# breaks: test_params_by_hand
# A calculator string of nested powers (a value past 1.8e308): refused at once by the bounds on typed
# arithmetic, with a verdict in words; before the bounds it held the grading process for 26-43 s.
# %% cell: params_by_hand
n_params = "((9^64)^64)^64"
