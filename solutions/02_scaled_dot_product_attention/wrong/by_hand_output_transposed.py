# breaks: test_output_by_hand
# mistake: av_transposed
# %% cell: output_by_hand
output = {answer:av_transposed}
