# breaks: test_mha_forward
# mistake: value_defaults_to_query
# value falls back to the query, not to the key: wrong for cross-attention called as mha(x, memory).
# %% patch: mha_forward
# - value = key if value is None else value
# + value = query if value is None else value
