# breaks: test_tiny_gpt
# mistake: target_shift_two
# %% patch: tiny_gpt
# - loss = None if targets is None else F.cross_entropy(logits.reshape(B * L, -1), targets.reshape(B * L))
# + loss = None if targets is None else F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), targets[:, 1:].reshape(-1))
