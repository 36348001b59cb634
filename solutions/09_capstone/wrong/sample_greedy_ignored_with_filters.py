# breaks: test_sample_next_token
# mistake: greedy_flag_ignored
# sample_next_token takes the argmax only when no filter is given; greedy=True with filters samples.
# %% patch: sample_next_token
# - if greedy:
# + if greedy and top_k is None and top_p is None:
