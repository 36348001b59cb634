# breaks: test_causal_self_attention
# mistake: fixed_size_mask_buffer
# %% patch: causal_self_attention
# - self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
# + self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
# + self.register_buffer("mask", torch.ones(64, 64, dtype=torch.bool).tril())
# - causal = torch.ones(L, L, dtype=torch.bool, device=x.device).tril()  # query i sees keys j <= i
# + causal = self.mask[:L, :L]
