# breaks: test_causal_self_attention
# mistake: causal_upper_triangle
# %% patch: causal_self_attention
# - causal = torch.ones(L, L, dtype=torch.bool, device=x.device).tril()  # query i sees keys j <= i
# + causal = torch.ones(L, L, dtype=torch.bool, device=x.device).triu()
